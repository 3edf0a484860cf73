"""One llama.cpp model behind a lock: lazy load, JSON-constrained chat, a deadline.

llama.cpp contexts are not thread-safe, so every call (and the load) holds one
lock. The answer is streamed so that the deadline can be checked between tokens
and generation abandoned; llama-cpp-python offers no other way to stop a chat
completion early (an exception in a logits processor is swallowed by ctypes).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from brainmem_ros.encoders.llama_cpu import has_amx, without_extra_buffers
from brainmem_ros.errors import ConfigError, ExtractionError, ModelError


class ChatBackend(Protocol):
    """The part of ``llama_cpp.Llama`` this module uses (tests pass a fake)."""

    def create_chat_completion(self, *, messages: list[dict[str, str]],
                               response_format: dict[str, Any], temperature: float,
                               max_tokens: int, stream: bool) -> Any:
        """Return a completion dict, or an iterator of chunks when ``stream``."""
        ...


def _load_llama(model_path: Path, n_ctx: int, n_threads: int, chat_format: str | None) -> ChatBackend:
    try:
        import llama_cpp  # optional and heavy: imported once a model is used
    except ImportError:
        msg = 'llama-cpp-python is not installed (pip install llama-cpp-python)'
        raise ModelError(msg) from None
    try:
        # AMX kernels crash on the default model: see brainmem_ros/encoders/llama_cpu.py.
        with without_extra_buffers(llama_cpp.llama_cpp, when=has_amx()):
            llm = llama_cpp.Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads,
                                  chat_format=chat_format, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        msg = f'cannot load GGUF model {model_path}: {exc}'
        raise ModelError(msg) from None
    if chat_format is None and 'tokenizer.chat_template' not in llm.metadata:
        # Without a template in the GGUF llama-cpp-python falls back to the llama-2
        # format, which Gemma answers with noise.
        if str(llm.metadata.get('general.architecture', '')).startswith('gemma'):
            llm.chat_format = 'gemma'
    return _LlamaBackend(llm)


class _LlamaBackend:
    """Narrows ``llama_cpp.Llama`` to the ChatBackend call this module makes."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm

    def create_chat_completion(self, *, messages: list[dict[str, str]],
                               response_format: dict[str, Any], temperature: float,
                               max_tokens: int, stream: bool) -> Any:
        """Forward to the model."""
        return self._llm.create_chat_completion(
            messages=messages, response_format=response_format, temperature=temperature,
            max_tokens=max_tokens, stream=stream)


def _content(result: Any, deadline: float, timeout_s: float) -> str:
    if isinstance(result, Mapping):
        return str(result['choices'][0]['message'].get('content') or '')
    parts: list[str] = []
    chunks: Iterable[Mapping[str, Any]] = result
    iterator = iter(chunks)
    try:
        for chunk in iterator:
            delta = chunk['choices'][0].get('delta', {})
            parts.append(str(delta.get('content') or ''))
            if time.monotonic() > deadline:
                msg = f'LLM timed out after {timeout_s:g} s'
                raise ExtractionError(msg)
    finally:
        close = getattr(iterator, 'close', None)
        if callable(close):
            close()
    return ''.join(parts)


class LlamaChat:
    """A GGUF model loaded on first use and asked for JSON that fits a schema.

    ``loader`` replaces the llama.cpp loader (tests use a fake backend);
    ``chat_format`` None means the GGUF's own template (Gemma without one: gemma).
    """

    def __init__(self, model_path: str | Path, *, n_ctx: int = 1024, n_threads: int = 2,
                 timeout_s: float = 20.0, chat_format: str | None = None,
                 loader: Callable[[], ChatBackend] | None = None) -> None:
        if n_ctx < 128 or n_threads < 1 or not timeout_s > 0:
            msg = (f'invalid LLM options: n_ctx={n_ctx} (>= 128), n_threads={n_threads} (>= 1), '
                   f'timeout_s={timeout_s} (> 0)')
            raise ConfigError(msg)
        self.model_path = Path(model_path).expanduser()
        if loader is None and not self.model_path.is_file():
            msg = (f'GGUF model file not found: {self.model_path} '
                   '(run `make setup` or python -m brainmem_ros.encoders.models)')
            raise ModelError(msg)
        self.n_ctx = n_ctx
        self.timeout_s = timeout_s
        self._loader = loader or (lambda: _load_llama(self.model_path, n_ctx, n_threads, chat_format))
        self._backend: ChatBackend | None = None
        self._lock = threading.Lock()

    def complete_json(self, prompt: str, schema: Mapping[str, Any], *, max_tokens: int) -> dict[str, Any]:
        """Ask the model for one JSON object that fits ``schema`` (temperature 0).

        Raises ExtractionError on timeout, a busy model, a failed call or output
        that is not a JSON object; ModelError when the model cannot be loaded.
        """
        deadline = time.monotonic() + self.timeout_s
        if not self._lock.acquire(timeout=self.timeout_s):
            msg = f'LLM busy: no turn within {self.timeout_s:g} s'
            raise ExtractionError(msg)
        try:
            if self._backend is None:
                self._backend = self._loader()
            try:
                result = self._backend.create_chat_completion(
                    messages=[{'role': 'user', 'content': prompt}],
                    response_format={'type': 'json_object', 'schema': dict(schema)},
                    temperature=0.0, max_tokens=max_tokens, stream=True)
                text = _content(result, deadline, self.timeout_s)
            except (ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
                msg = f'LLM call failed: {type(exc).__name__}: {exc}'
                raise ExtractionError(msg) from None
        finally:
            self._lock.release()
        try:
            payload = json.loads(text)
        except ValueError:
            msg = f'LLM output is not valid JSON: {text[:120]!r}'
            raise ExtractionError(msg) from None
        if not isinstance(payload, dict):
            msg = f'LLM output is not a JSON object: {text[:120]!r}'
            raise ExtractionError(msg)
        return payload

"""Sentence embeddings with ONNX Runtime (default: all-MiniLM-L6-v2, int8)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from brainmem_ros.errors import ConfigError, ModelError


class OnnxEmbedder:
    """A transformer sentence encoder: tokenize, run, pool over the mask, L2-normalise."""

    def __init__(self, model_path: Path, tokenizer_path: Path, *, max_tokens: int = 128,
                 threads: int = 1, batch_size: int = 32, pooling: str = 'mean') -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        for path, what in ((model_path, 'ONNX encoder model'), (tokenizer_path, 'tokenizer.json')):
            if not Path(path).is_file():
                msg = f'{what} not found: {path} (run `make setup` or set encoder paths)'
                raise ModelError(msg)
        if pooling not in ('mean', 'cls'):
            msg = f'pooling must be mean or cls, got {pooling!r}'
            raise ConfigError(msg)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(model_path), options,
                                                 providers=['CPUExecutionProvider'])
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # noqa: BLE001 - onnxruntime/tokenizers raise bare Exceptions
            msg = f'cannot load encoder {model_path}: {exc}'
            raise ModelError(msg) from None
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        # The tokenizer's padding/truncation state is shared: one batch at a time.
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.pooling = pooling
        self._dim = int(self._run(['dimension probe']).shape[1])

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-norm float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [self._run(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts).astype(np.float32)

    def _run(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encoded], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        if self.pooling == 'cls':
            pooled = hidden[:, 0, :]
        else:
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)

"""Sentence embeddings with ONNX Runtime and a Hugging Face ``tokenizer.json``.

The default is all-MiniLM-L6-v2 (int8, 384-d); any encoder that outputs
``last_hidden_state`` (pooled here) or an already pooled 2-D tensor works.

>>> from brainmem_ros.encoders.models import materialise_models
>>> paths = materialise_models(include_llm=False)
>>> embedder = OnnxEmbedder(paths.embedder_model, paths.tokenizer)
>>> embedder.embed(['I opened the fridge']).shape
(1, 384)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

from brainmem_ros.encoders.cache import LruCache
from brainmem_ros.errors import ConfigError, ModelError

POOLINGS = ('mean', 'cls')
#: Primed vectors waiting for their ``embed`` (the ingest primes one batch ahead).
PRIMED_MAX = 4096
_TOKEN_INPUTS = ('input_ids', 'attention_mask', 'token_type_ids')


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        msg = f'{what} not found: {path} (run `make setup` or python -m brainmem_ros.encoders.models)'
        raise ModelError(msg)


class OnnxEmbedder:
    """Embedder running an ONNX sentence encoder on the CPU.

    Texts are cut to ``max_tokens`` tokens and padded per batch of ``batch_size``;
    vectors are mean-pooled over the attention mask (or the first token with
    ``pooling='cls'``) and L2-normalised. ``cache_size`` recent texts are kept.
    :meth:`prime` computes texts ahead of the ``embed`` that will ask for them (kept
    apart from the cache, so a cache of 0 or one churned by queries still finds them).
    Safe to call from several threads.

    ``batch_size`` defaults to 1 because the default (dynamically quantized) encoder
    picks one activation scale per call: in a batch, a text's vector would depend on
    the other texts (cosine down to 0.986 measured), and a memory's vector must not
    depend on what arrived with it. Batches cost 20% less time per text; they are
    safe with float encoders such as the packaged source model.
    """

    def __init__(self, model_path: str | Path, tokenizer_path: str | Path, *,
                 max_tokens: int = 128, threads: int = 1, batch_size: int = 1,
                 pooling: str = 'mean', cache_size: int = 1024, parallel: int = 1,
                 output: str = '', query_threads: int = 0) -> None:
        if max_tokens < 2 or threads < 1 or batch_size < 1 or cache_size < 0 or parallel < 1 \
                or query_threads < 0:
            msg = (f'invalid embedder options: max_tokens={max_tokens} (>= 2), threads={threads} '
                   f'(>= 1), batch_size={batch_size} (>= 1), cache_size={cache_size} (>= 0), '
                   f'parallel={parallel} (>= 1), query_threads={query_threads} (>= 0)')
            raise ConfigError(msg)
        # Several texts in one embed() (query, goal and state; a batch of observations)
        # run as up to ``parallel`` session calls at once: ONNX Runtime releases the GIL.
        # Measured on 2 cores: store_many x32 went from 136 to 206-214 observations/s
        # in-process, but the node's topic ingest (whose commit thread needs the second
        # core) went from ~125 to ~116/s and Retrieve did not change; so the node's
        # default is 1 (``encoder.parallel_calls``), more for machines with idle cores.
        self._pool = (ThreadPoolExecutor(max_workers=parallel, thread_name_prefix='brainmem-encoder')
                      if parallel > 1 else None)
        if pooling not in POOLINGS:
            msg = f'unknown pooling {pooling!r} (expected one of: {", ".join(POOLINGS)})'
            raise ConfigError(msg)
        model_file = Path(model_path).expanduser()
        tokenizer_file = Path(tokenizer_path).expanduser()
        _require_file(model_file, 'ONNX embedding model')
        _require_file(tokenizer_file, 'tokenizer.json')
        self._pooling = pooling
        self._batch_size = batch_size
        self._tokenizer = _load_tokenizer(tokenizer_file, max_tokens)
        # The Rust tokenizer object is shared mutable state behind PyO3; one caller
        # at a time. ONNX Runtime's session.run is documented thread-safe.
        self._tokenizer_lock = threading.Lock()
        self._session = _load_session(model_file, threads)
        # Retrieve's texts can run on a session of their own with more threads (the same
        # vectors; 36 MB more). Measured on 2 cores: 2.61 -> 1.99 ms per query text with 2
        # threads, but a whole Retrieve, which finds its lexical candidates on the other
        # core meanwhile, was faster sharing the one-thread session (p50 12.3-12.8 ->
        # 10.7-10.8 ms on the 10k bench store), so the default shares it.
        self._query_session = (_load_session(model_file, query_threads)
                               if query_threads and query_threads != threads else self._session)
        declared = {i.name for i in self._session.get_inputs()}
        missing = {'input_ids', 'attention_mask'} - declared
        if missing:
            msg = f'{model_file} lacks the inputs {sorted(missing)}; not a sentence encoder'
            raise ModelError(msg)
        self._inputs = tuple(name for name in _TOKEN_INPUTS if name in declared)
        self._output = _pick_output(self._session, output, model_file)
        self._cache: LruCache[str, npt.NDArray[np.float32]] = LruCache(cache_size)
        self._primed: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._primed_lock = threading.Lock()
        self._dim = self._probe_dim()

    @property
    def dim(self) -> int:
        """Vector dimension (read from the model)."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return an array of shape ``(len(texts), dim)``, each row of unit norm."""
        return self._embed(texts, self._session)

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """As :meth:`embed`, on the query session (``query_threads``)."""
        return self._embed(texts, self._query_session)

    def _embed(self, texts: Sequence[str], session: ort.InferenceSession) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        rows: dict[str, list[int]] = {}
        for row, text in enumerate(texts):
            rows.setdefault(text, []).append(row)
        todo: list[str] = []
        for text, where in rows.items():
            hit = self._lookup(text)
            if hit is None:
                todo.append(text)
            else:
                out[where] = hit
        for text, vector in self._compute(todo, session).items():
            self._cache.put(text, vector)
            out[rows[text]] = vector
        return out

    def prime(self, texts: Sequence[str]) -> None:
        """Compute the vectors of ``texts`` now, so that the next ``embed`` of each is a lookup.

        At most :data:`PRIMED_MAX` primed vectors wait; past that the oldest are dropped
        (and computed again if asked for).
        """
        with self._primed_lock:
            known = set(self._primed)
        todo = [t for t in dict.fromkeys(texts) if t not in known and self._cache.get(t) is None]
        computed = self._compute(todo, self._session)
        with self._primed_lock:
            self._primed.update(computed)
            while len(self._primed) > PRIMED_MAX:
                self._primed.popitem(last=False)

    def _lookup(self, text: str) -> npt.NDArray[np.float32] | None:
        with self._primed_lock:
            primed = self._primed.pop(text, None)
        if primed is None:
            return self._cache.get(text)
        self._cache.put(text, primed)
        return primed

    def _compute(self, texts: list[str], session: ort.InferenceSession) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors of distinct ``texts``, in batches of ``batch_size``."""
        # Similar lengths in one batch waste less padding.
        pending = sorted(texts, key=len)
        batches = [pending[start:start + self._batch_size]
                   for start in range(0, len(pending), self._batch_size)]
        if self._pool is not None and len(batches) > 1:
            results = list(self._pool.map(lambda batch: self._run(batch, session), batches))
        else:
            results = [self._run(batch, session) for batch in batches]
        return {text: vector for batch, vectors in zip(batches, results, strict=True)
                for text, vector in zip(batch, vectors, strict=True)}

    def _run(self, texts: list[str], session: ort.InferenceSession) -> npt.NDArray[np.float32]:
        with self._tokenizer_lock:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {'input_ids': ids, 'attention_mask': mask,
                 'token_type_ids': np.array([e.type_ids for e in encodings], dtype=np.int64)}
        try:
            result = session.run([self._output], {k: feeds[k] for k in self._inputs})[0]
        except Exception as exc:  # noqa: BLE001 - onnxruntime's pybind errors share no base class
            msg = f'ONNX embedding model failed: {exc}'
            raise ModelError(msg) from None
        hidden = np.asarray(result, dtype=np.float32)
        if hidden.ndim == 3:
            if self._pooling == 'cls':
                pooled = hidden[:, 0, :]
            else:
                weights = mask[:, :, None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        elif hidden.ndim == 2:
            pooled = hidden  # the model pools itself
        else:
            msg = f'unexpected ONNX output shape {hidden.shape}'
            raise ModelError(msg)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: npt.NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised

    def _probe_dim(self) -> int:
        shape = next(o.shape for o in self._session.get_outputs() if o.name == self._output)
        if shape and isinstance(shape[-1], int) and shape[-1] > 0:
            return int(shape[-1])
        return int(self._run(['dimension probe'], self._session).shape[1])


def _pick_output(session: ort.InferenceSession, wanted: str, path: Path) -> str:
    """The output holding token states (pooled here) or a pooled vector.

    ``wanted`` names it; otherwise the first output of shape (batch, tokens, dim), then the
    first of shape (batch, dim), with dim a number: exported encoders differ in what
    they put first (paraphrase-MiniLM-L3-v2's first output is a mask-like (batch, tokens)).
    """
    outputs = session.get_outputs()
    names = [o.name for o in outputs]
    if wanted:
        if wanted not in names:
            msg = f'{path} has no output {wanted!r} (it has: {", ".join(names)})'
            raise ModelError(msg)
        return wanted
    for rank in (3, 2):
        for o in outputs:
            if len(o.shape) == rank and isinstance(o.shape[-1], int) and o.shape[-1] > 1:
                return str(o.name)
    return str(outputs[0].name)


def _load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception
        msg = f'cannot read tokenizer {path}: {exc}'
        raise ModelError(msg) from None
    tokenizer.enable_truncation(max_length=max_tokens)
    padding = tokenizer.padding or {}
    tokenizer.enable_padding(pad_id=int(padding.get('pad_id', 0)),
                             pad_token=str(padding.get('pad_token', '[PAD]')))
    return tokenizer


def _load_session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(str(path), sess_options=options,
                                    providers=['CPUExecutionProvider'])
    except Exception as exc:  # noqa: BLE001 - onnxruntime's pybind errors share no base class
        msg = f'cannot load ONNX model {path}: {exc}'
        raise ModelError(msg) from None

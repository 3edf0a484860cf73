"""The encoders a memory uses unless it is given others (loaded only when asked for)."""

from __future__ import annotations

from pathlib import Path

from brainmem_ros.encoders.base import Embedder, Extractor
from brainmem_ros.memory.config import EncoderConfig


def default_embedder(config: EncoderConfig) -> Embedder:
    """The configured ONNX encoder (all-MiniLM-L6-v2, dynamic int8, unless paths are given)."""
    from brainmem_ros.encoders.models import default_model_paths
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder

    paths = default_model_paths(Path(config.model_dir) if config.model_dir else None)
    embedder: Embedder = OnnxEmbedder(
        Path(config.embedder_model) if config.embedder_model else paths.embedder_model,
        Path(config.tokenizer) if config.tokenizer else paths.tokenizer,
        max_tokens=config.max_tokens, threads=config.threads, batch_size=config.batch_size,
        parallel=config.parallel_calls, output=config.embedder_output, query_threads=config.query_threads)
    return embedder


def default_extractor() -> Extractor:
    """The grounded extractor of the fast path: spaCy's parse (encoders/parsed.py)."""
    from brainmem_ros.encoders.parsed import SpacyExtractor

    return SpacyExtractor()

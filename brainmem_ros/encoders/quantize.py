"""Derive the fast default encoder: the packaged int8 model with integer matrix products.

The packaged all-MiniLM-L6-v2 stores its weights as int8, but every weight is cast
back to float32 (``Cast`` + ``Mul``) inside the graph, so ONNX Runtime folds them at
load time and runs every product in float32. Dynamic quantization (per-channel int8
weights, activations quantized per call) turns those products into
``MatMulInteger``/``DynamicQuantizeMatMul``, which run on the CPU's integer dot-product
units. Measured by ``python -m bench.encoder`` (one thread, 300 household sentences and
planner questions): 2.8 instead of 6.7 ms per text one per call, 2.0 instead of 4.7 in
batches; cosine to the packaged model's vectors 0.993 on average (0.988 at worst), and
92% of each text's 10 nearest neighbours unchanged.

This runs once at set-up (``python -m brainmem_ros.encoders.models``); it needs the
``onnx`` package, which the run time does not.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from brainmem_ros.encoders.cpu import cpu_flags
from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder
from brainmem_ros.errors import ModelError

# Derived files are accepted when every probe sentence keeps this cosine to the
# source model's embedding (measured minimum 0.988 for the default model).
MIN_AGREEMENT = 0.97

PROBES = (
    'I opened the fridge',
    'The refrigerator door is open',
    'Picked up the red cup from the kitchen table.',
    'The charging dock in the hallway is blocked by a box.',
    'Failed to open the bedroom door: it was locked.',
    'where did I last see the remote control?',
    'Delivered the parcel to room 214 at 10:32.',
    'The floor near the sink is wet',
    'ok',  # short texts are where a saturating product shows first (cosine 0.968 with 's8' on AVX2)
)


def weight_kind() -> str:
    """'s8' or 'u8': the int8 weights whose products this CPU computes without saturating.

    x86 CPUs without VNNI multiply uint8 activations by int8 weights with an instruction
    that saturates its 16-bit sums (ONNX Runtime documents it): on an AMD EPYC without
    VNNI the 's8' encoder's cosine to the packaged model fell to 0.968 on "ok", while
    'u8' weights kept 0.977 at the same speed (3.9 vs 4.0 ms per text). With VNNI, or
    off x86, 's8' products are exact and the faster kind: on an AMD EPYC with AVX-512
    VNNI, 's8' kept a cosine of 0.982 at worst ("ok"; 0.993 on average) and took 2.9 ms
    of CPU per text, 'u8' 0.977 (0.993) and 4.1 ms (2026-12-02; the 300 texts of
    ``python -m bench.encoder`` and the probes below, one per call, interleaved).
    """
    import platform

    if platform.machine().lower() not in ('x86_64', 'amd64', 'i386', 'i686'):
        return 's8'
    flags = cpu_flags()
    return 's8' if flags and {'avx512_vnni', 'avx_vnni'} & flags else 'u8'


@contextmanager
def _quiet_root_logger() -> Iterator[None]:
    # quantize_dynamic warns through the root logger that pre-processing was not run;
    # shape inference is what that step adds and this graph needs none.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def derive_dynamic_int8(source: Path, target: Path, *, weights: str = 's8') -> None:
    """Write ``source`` with folded float weights re-quantized per channel to ``target``.

    ``weights``: 's8' or 'u8' (:func:`weight_kind` says which suits this CPU).
    """
    # Imported here: the quantization tool pulls in onnx, which only set-up needs.
    import onnxruntime as ort
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        msg = f'deriving the fast encoder needs the onnx package (pip install onnx): {exc}'
        raise ModelError(msg) from None
    with tempfile.TemporaryDirectory(prefix='.derive-', dir=target.parent) as work:
        folded = Path(work) / 'folded.onnx'
        options = ort.SessionOptions()
        # BASIC = constant folding and standard-op rewrites only, so the saved
        # graph stays portable (no fused ops tied to this CPU).
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        try:
            ort.InferenceSession(str(source), sess_options=options, providers=['CPUExecutionProvider'])
            with _quiet_root_logger():
                quantize_dynamic(folded, target, per_channel=True,
                                 weight_type=QuantType.QUInt8 if weights == 'u8' else QuantType.QInt8)
        except Exception as exc:  # noqa: BLE001 - onnxruntime/onnx errors share no base class
            msg = f'cannot derive the dynamic int8 encoder from {source}: {exc}'
            raise ModelError(msg) from None


def agreement(source: Path, derived: Path, tokenizer: Path) -> float:
    """Smallest cosine between the two models' embeddings of :data:`PROBES`."""
    reference = OnnxEmbedder(source, tokenizer, cache_size=0).embed(PROBES)
    candidate = OnnxEmbedder(derived, tokenizer, cache_size=0).embed(PROBES)
    return float(np.min(np.sum(reference * candidate, axis=1)))

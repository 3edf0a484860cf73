"""Loading a GGUF model without llama.cpp's AMX kernels on CPUs that have them.

On x86 CPUs with AMX (Intel Xeon from Sapphire Rapids on), llama.cpp repacks the
weights it can into an "AMX" buffer and multiplies them with tile instructions. With
the default model (Gemma 3 270M, Q4_K_M) through llama-cpp-python 0.3.36 built for
such a CPU, the first decode then dies with a segmentation fault in the AMX path
(seen on 2026-12-02 on a 2-core Intel Xeon with AMX_INT8: the node, the CLI and
`test_real_model_end_to_end` all crashed; reported upstream as ggml-org/llama.cpp#20824,
closed without a fix). llama.cpp's ``use_extra_bufts`` model parameter turns the extra
buffer types (AMX, and the CPU repacking of weights) off; llama-cpp-python 0.3.36 does not
expose it in ``Llama(...)``, so the default parameters it starts from are adjusted while
the model loads. Elsewhere nothing changes: the repacking is faster where it works.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from brainmem_ros.encoders.cpu import cpu_flags

_PATCH_LOCK = threading.Lock()


def has_amx(cpuinfo: str | None = None) -> bool:
    """Whether the CPU has AMX tiles (the ``amx_tile`` flag of ``/proc/cpuinfo``).

    >>> has_amx('flags : fpu avx2 avx512f amx_bf16 amx_tile amx_int8')
    True
    >>> has_amx('flags : fpu avx2 avx512f avx512_vnni')
    False
    """
    return 'amx_tile' in (cpu_flags(cpuinfo) or ())


@contextmanager
def without_extra_buffers(module: Any, *, when: bool) -> Iterator[None]:
    """While the block runs, ``module.llama_model_default_params()`` (llama-cpp-python's
    ``llama_cpp.llama_cpp``) returns parameters with ``use_extra_bufts`` off, if ``when``.

    Process-wide for the duration, so serialised: only model loads run inside it.
    """
    original: Callable[[], Any] | None = getattr(module, 'llama_model_default_params', None)
    if not when or original is None:
        yield
        return

    def defaults() -> Any:
        params = original()
        if hasattr(params, 'use_extra_bufts'):
            params.use_extra_bufts = False
        return params

    with _PATCH_LOCK:
        module.llama_model_default_params = defaults
        try:
            yield
        finally:
            module.llama_model_default_params = original

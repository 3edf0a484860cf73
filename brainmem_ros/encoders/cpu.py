"""The CPU's feature flags: which kernels the encoder and the LLM can trust on it."""

from __future__ import annotations

from pathlib import Path

_CPUINFO = Path('/proc/cpuinfo')


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str] | None:
    r"""The first ``flags`` line of ``/proc/cpuinfo`` (or of ``cpuinfo``) as a set; None when
    there is none to read (not Linux, or a CPU that lists no flags, as on ARM).

    >>> sorted(cpu_flags('processor : 0\nvmx flags : ept\nflags : fpu avx2 amx_tile\n') or ())
    ['amx_tile', 'avx2', 'fpu']
    >>> cpu_flags('processor : 0\nFeatures : fp asimd\n') is None
    True
    """
    if cpuinfo is None:
        try:
            cpuinfo = _CPUINFO.read_text(errors='replace')
        except OSError:
            return None
    for line in cpuinfo.splitlines():
        if line.startswith('flags'):
            return frozenset(line.split(':', 1)[-1].split())
    return None

"""Point the ROS 2 wheels' CMake export files at this interpreter's include dirs.

The ros-jazzy-* wheels hard-code the build machine's Python and NumPy include
directories in their rosidl_generator_py export files; generating our own
interfaces against them fails until those paths name this machine's. Idempotent.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import numpy as np

_PY_INCLUDE = re.compile(r'/opt/python/cp3\d+-cp3\d+/include/python3\.\d+')
_NP_INCLUDE = re.compile(r'/opt/python/cp3\d+-cp3\d+/lib/python3\.\d+/site-packages/numpy/_core/include')


def main() -> int:
    """Rewrite every ``<prefix>/share/*/cmake/*.cmake`` that names the wheel builder's paths."""
    prefix = Path(sys.prefix)
    py_include = sysconfig.get_paths()['include']
    np_include = np.get_include()
    changed = 0
    for path in sorted(prefix.glob('share/*/cmake/*.cmake')):
        text = path.read_text()
        new = _NP_INCLUDE.sub(np_include, text)
        new = _PY_INCLUDE.sub(py_include, new)
        if new != text:
            path.write_text(new)
            changed += 1
    print(f'fix_cmake_paths: {changed} file(s) rewritten')
    return 0


if __name__ == '__main__':
    sys.exit(main())

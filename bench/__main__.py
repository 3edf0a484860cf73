"""``make bench``: run every benchmark and regenerate its page under docs/."""

from __future__ import annotations

import sys

from bench import scenarios


def main() -> int:
    """Run all benchmarks."""
    scenarios.main()
    return 0


if __name__ == '__main__':
    sys.exit(main())

"""Benchmarks (not run by CI); results are written under docs/."""

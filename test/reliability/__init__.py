"""Helpers of the reliability suites (test_reliability_*.py): fault injection and DDS clients."""

"""Benchmarks that compare the serving paths side by side in one run (see bench/__main__.py)."""

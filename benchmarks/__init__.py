"""Benchmarks of kernelmaps against scikit-learn's kernel approximation maps."""

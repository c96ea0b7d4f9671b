"""Kernel machines: fitted on explicit features z(x) or on the kernel k directly."""

__all__: list[str] = []

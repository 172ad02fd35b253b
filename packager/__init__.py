"""Validate, rename, archive and publish Triton model repositories."""

__version__ = "0.1.0"

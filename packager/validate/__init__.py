"""Validation of Triton model repositories against the rules Triton applies at load time."""

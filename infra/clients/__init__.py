"""Inference targets: one small contract (base.py), one module per way of reaching Triton."""

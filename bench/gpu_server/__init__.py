"""Parts of bench/gpu_check.py (not a bench script of its own)."""

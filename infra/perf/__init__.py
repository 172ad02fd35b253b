"""Measurement and planning: load generation, benchmarks, tuning, capacity and cost."""

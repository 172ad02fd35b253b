"""The local endpoint: a real Triton behind a SageMaker-runtime-compatible front."""

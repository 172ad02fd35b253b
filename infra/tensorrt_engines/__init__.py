"""`tdk build`: TensorRT plans built on the serving GPU, parity-checked, cached in the store."""

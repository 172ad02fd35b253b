"""`tdk build`: TensorRT engines built on the serving GPU, parity-checked, cached in the store."""

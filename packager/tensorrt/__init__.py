"""TensorRT engines: the cache of built engines in a release store, who vouches for them, and
models packaged with them."""

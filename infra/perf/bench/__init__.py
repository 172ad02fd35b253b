"""``tdk bench``: load generation (closed and open loop, threads or processes, CPU placement)
and the measurements built on it."""

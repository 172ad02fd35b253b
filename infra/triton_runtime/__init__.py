"""The Triton runtime on this machine: the ``nvidia-pytriton`` wheel's server as a child process,
the model adapter for its CPU-only backends, and the private files and state directory it keeps.
The local target serves with it and ``tdk tune`` measures with it; it imports neither."""

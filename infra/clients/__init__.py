"""Clients shared by the targets: the request codec, input parsing, Triton over HTTP."""

"""Google Cloud, as the gke target reaches it from this machine (``machine``)."""

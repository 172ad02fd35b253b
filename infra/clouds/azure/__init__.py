"""Microsoft Azure, as the aks target reaches it: its VM sizes and GPUs (``catalog``), prices with
their fetcher, the AKS calendar (``versions``) and this machine's Azure sign-in (``machine``)."""

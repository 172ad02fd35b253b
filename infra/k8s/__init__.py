"""The Kubernetes layer the Kubernetes targets build on: the Triton workload's pure manifest
builders and their Pulumi component, and the target-contract pieces (``common``: the shared
target base; ``entry``: the registry entry; ``client``: operate; ``models``: the model set)."""

"""The Kubernetes layer that gke, eks and aks build on: the Triton workload's pure manifest
builders and their Pulumi component, and the target-contract pieces (``common``: the shared
target base; ``entry``: the registry entry; ``client``: operate; ``models``: the model set)."""

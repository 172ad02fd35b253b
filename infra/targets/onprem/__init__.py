"""The onprem target: Triton on an existing Kubernetes cluster, reached through a kubeconfig."""

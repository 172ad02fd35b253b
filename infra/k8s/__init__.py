"""The Triton workload shared by GKE and EKS: pure manifest builders and their Pulumi component."""

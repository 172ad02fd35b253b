"""The EKS target: config, builders, Pulumi components, client."""

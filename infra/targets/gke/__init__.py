"""The GKE target: config, builders, Pulumi components, client."""

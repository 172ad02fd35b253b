"""The SageMaker inference components target: config, builders, Pulumi components, client."""

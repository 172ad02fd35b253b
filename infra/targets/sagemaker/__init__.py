"""The SageMaker multi-model endpoint target: config, builders, Pulumi components, client."""

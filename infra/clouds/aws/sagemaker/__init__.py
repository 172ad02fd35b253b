"""What the two SageMaker targets (``sagemaker``, ``sagemaker-ic``) and the local endpoint's
SageMaker-compatible front share: the Triton image and instance facts, the container
environment, IAM, the release bucket, CloudWatch metrics and alarms, the runtime client, and
inference component names. It never imports a target (they use it, not the other way)."""

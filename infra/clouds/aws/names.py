"""AWS's rules for the names the sagemaker, sagemaker-ic and eks targets derive from a stack's
``name``: each service's limit and pattern (SageMaker's, CloudWatch's and Application Auto
Scaling's from botocore's service models, ``generated.json``; the others from each service's API
reference, as ``infra.values.names.NameRule`` rows)."""

from __future__ import annotations

from infra.clouds.aws.generated import name_bounds
from infra.values.names import NameRule

IAM_ROLE = NameRule("IAM role name", 64, r"[\w+=,.@-]+")
#: SageMaker's and CloudWatch's limits come from botocore (infra/clouds/aws/generated.json)
SAGEMAKER = NameRule("SageMaker name", *name_bounds("sagemaker.EndpointName"))
CW_NAME = NameRule(
    "CloudWatch dashboard/alarm name", name_bounds("cloudwatch.AlarmName")[0], r"[A-Za-z0-9_-]+"
)
SNS_TOPIC = NameRule("SNS topic name", 256, r"[A-Za-z0-9_-]+")
APP_SCALING_POLICY = NameRule(
    "Application Auto Scaling policy name",
    name_bounds("application-autoscaling.PolicyName")[0],
    r"[^:/]+",
)
EKS_CLUSTER = NameRule("EKS cluster name", 100, r"[0-9A-Za-z][A-Za-z0-9_-]*")
EKS_NODEGROUP = NameRule("EKS node group name", 63, r"[0-9A-Za-z][A-Za-z0-9_-]*")
AMP_ALIAS = NameRule("AMP workspace alias", 100, r".+")
LOG_GROUP = NameRule("CloudWatch Logs group name", 512, r"[\w#./-]+")
BUDGET = NameRule("AWS Budgets budget name", 100, r"[^:\\]+")
#: the eks stack's front image repository (k8sModelMode mme, k8sFrontImage empty); botocore's
#: ``ecr.RepositoryName`` (lowercase, ``/``-separated path components)
ECR_REPOSITORY = NameRule("ECR repository name", *name_bounds("ecr.RepositoryName"))

#: the longest inference component name (botocore ``InferenceComponentName``): a template's
#: ``{component}`` is rendered with it, so a name that fits fits every component
LONGEST_COMPONENT = "c" * name_bounds("sagemaker.InferenceComponentName")[0]

"""IAM policy documents for the MME execution role: read the release, pull, log, measure.

Object reads are scoped to the release's ``mme/`` prefix; the two actions AWS cannot scope
to a resource (``ecr:GetAuthorizationToken``, ``cloudwatch:PutMetricData``) are the only
``"*"`` resources, the latter narrowed to SageMaker's namespaces by condition.
"""

from __future__ import annotations

from typing import Any

from infra.clouds.aws.arn import partition
from infra.config import ReleaseLocation

Document = dict[str, Any]


def assume_role_policy() -> Document:
    """Only SageMaker may assume the execution role."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "sagemaker.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def image_repository_arn(image_uri: str) -> str:
    """``<acct>.dkr.ecr.<region>.amazonaws.com[.cn]/<repo>:<tag>`` -> the repository ARN."""
    host, _, path = image_uri.partition("/")
    account, _, rest = host.partition(".dkr.ecr.")
    region = rest.split(".", 1)[0]
    repository = path.split(":", 1)[0].split("@", 1)[0]
    return f"arn:{partition(region)}:ecr:{region}:{account}:repository/{repository}"


def endpoint_log_group(endpoint_name: str) -> str:
    """The log group SageMaker writes an endpoint's container logs to."""
    return f"/aws/sagemaker/Endpoints/{endpoint_name}"


def execution_policy(
    release: ReleaseLocation,
    image_uri: str,
    region: str,
    endpoint_name: str,
    prefixes: tuple[str, ...] = ("mme/",),
) -> Document:
    """Least privilege for the Model: GetObject/ListBucket on ``<release>/mme/`` only (and
    ``repository/`` where inference components serve decoupled copies from it)."""
    arn = partition(region)
    keys = [release.key(prefix) for prefix in prefixes]
    objects = [f"arn:{arn}:s3:::{release.bucket}/{key}*" for key in keys]
    listed = [pattern for key in keys for pattern in (key, f"{key}*")]
    log_group = f"arn:{arn}:logs:{region}:*:log-group:{endpoint_log_group(endpoint_name)}"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReadReleaseArchives",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": objects[0] if len(objects) == 1 else objects,
            },
            {
                "Sid": "ListReleaseArchives",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": f"arn:{arn}:s3:::{release.bucket}",
                "Condition": {"StringLike": {"s3:prefix": listed}},
            },
            {
                "Sid": "PullTritonImage",
                "Effect": "Allow",
                "Action": [
                    "ecr:BatchCheckLayerAvailability",
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                ],
                "Resource": image_repository_arn(image_uri),
            },
            {
                "Sid": "EcrLoginCannotBeScoped",
                "Effect": "Allow",
                "Action": "ecr:GetAuthorizationToken",
                "Resource": "*",
            },
            {
                "Sid": "WriteEndpointLogs",
                "Effect": "Allow",
                "Action": [
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:DescribeLogStreams",
                    "logs:PutLogEvents",
                ],
                "Resource": [log_group, f"{log_group}:*"],
            },
            {
                "Sid": "PutSageMakerMetrics",
                "Effect": "Allow",
                "Action": "cloudwatch:PutMetricData",
                "Resource": "*",
                "Condition": {"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}},
            },
        ],
    }

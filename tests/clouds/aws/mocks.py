"""What the AWS providers (pulumi-aws, aws-native) answer under mocks for the targets on AWS
(tests/infra/pulumi_harness.py reads ``MOCKS``): every resource reports an ARN, a bucket its
generated name, an EKS cluster the security group EKS creates for it, an ECR repository its
URL, and ECR its registry login."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.infra.pulumi_harness import ProviderMocks

EKS_CLUSTER_SECURITY_GROUP = "sg-eks-cluster"
ACCOUNT, REGION = "123456789012", "us-east-1"


def reports(type_token: str, name: str, state: Mapping[str, Any]) -> dict[str, Any]:
    provider, _, _ = type_token.partition(":")
    if provider not in ("aws", "aws-native"):
        return {}
    out: dict[str, Any] = {}
    if "arn" not in state:
        out["arn"] = f"arn:aws:mock:::{type_token.split(':')[-1].lower()}/{name}"
    if type_token == "aws:s3/bucket:Bucket" and "bucket" not in state:
        out["bucket"] = f"{name}-0123456"
    if type_token == "aws:ecr/repository:Repository":
        out["registryId"] = ACCOUNT
        out["repositoryUrl"] = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/{state['name']}"
    if type_token == "aws:eks/cluster:Cluster":
        group = {"clusterSecurityGroupId": EKS_CLUSTER_SECURITY_GROUP}
        out["vpcConfig"] = {**state["vpcConfig"], **group}
    return out


#: ECR's answer to GetAuthorizationToken: user AWS and a 12-hour token as the password
ECR_PASSWORD = "mock-ecr-token"

MOCKS = ProviderMocks(
    reads={
        "aws:ecr/getAuthorizationToken:getAuthorizationToken": lambda args: {
            "userName": "AWS", "password": ECR_PASSWORD, "authorizationToken": "QVdTOm1vY2s=",
            "proxyEndpoint": f"https://{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com",
            "expiresAt": "2026-12-07T23:00:00Z", "id": REGION,
            "registryId": args.get("registryId"),
        },
    },
    reports=reports,
)  # fmt: skip

"""How a workload gets an AWS identity (no Pulumi, no AWS SDK): IAM policy documents, the trust
policy that lets an AWS service assume a role, and IAM Roles for Service Accounts (IRSA): the
trust policy that lets one Kubernetes ServiceAccount assume a role through the cluster's OIDC
provider, and the ServiceAccount annotation that names the role.

Sources (checked 2026-12-07): the EKS user guide's "Assign IAM roles to Kubernetes service
accounts" (https://docs.aws.amazon.com/eks/latest/userguide/associate-service-account-role.html:
an ``sts:AssumeRoleWithWebIdentity`` trust on the cluster's OIDC provider, conditioned on
``<issuer>:sub`` ``system:serviceaccount:<namespace>:<name>`` and ``<issuer>:aud``
``sts.amazonaws.com``) and eksctl's "IAM Roles for Service Accounts" (the ServiceAccount carries
the role's ARN as the annotation ``eks.amazonaws.com/role-arn``).
"""

from __future__ import annotations

import json
from typing import Any

#: the ServiceAccount annotation IRSA reads: the IAM role its pods assume
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"


def document(*statements: dict[str, Any]) -> str:
    """An IAM policy document (version 2012-10-17) of ``statements``, as JSON."""
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def service_trust_policy(service: str) -> str:
    """Trust policy letting an AWS service (eks, ec2) assume the role."""
    return document(
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    )


def irsa_trust_policy(oidc_arn: str, issuer_url: str, namespace: str, service_account: str) -> str:
    """Only ``system:serviceaccount:<namespace>:<service_account>`` may assume the role (IRSA)."""
    issuer = issuer_url.removeprefix("https://")
    return document(
        {
            "Effect": "Allow",
            "Principal": {"Federated": oidc_arn},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {
                "StringEquals": {
                    f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                    f"{issuer}:aud": "sts.amazonaws.com",
                }
            },
        }
    )

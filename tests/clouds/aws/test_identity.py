"""AWS's identity rules (infra/clouds/aws/identity.py): IRSA's trust policy binds one
ServiceAccount, a service's trust one service."""

from __future__ import annotations

import json

from infra.clouds.aws import identity


def test_irsa_trust_is_bound_to_one_service_account() -> None:
    trust = json.loads(
        identity.irsa_trust_policy("arn:oidc", "https://oidc.eks.x/id/AB", "triton", "svc")
    )
    condition = trust["Statement"][0]["Condition"]["StringEquals"]
    assert condition == {
        "oidc.eks.x/id/AB:sub": "system:serviceaccount:triton:svc",
        "oidc.eks.x/id/AB:aud": "sts.amazonaws.com",
    }


def test_service_trust_names_only_the_service() -> None:
    (statement,) = json.loads(identity.service_trust_policy("eks.amazonaws.com"))["Statement"]
    assert statement == {
        "Effect": "Allow",
        "Principal": {"Service": "eks.amazonaws.com"},
        "Action": "sts:AssumeRole",
    }

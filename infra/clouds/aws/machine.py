"""AWS as this machine reaches it (the sagemaker, sagemaker-ic and eks targets' ``cloud``).

The AWS credential chain (env, shared files, web identity, SSO), checked 2026-11-26:
https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from infra.facts.machine import Check, Cloud, Tool, has_profile, user_home

if TYPE_CHECKING:
    from infra.facts.findings import Finding

NAME = "aws"


def credentials(env: Mapping[str, str]) -> Check:
    """Where the AWS SDK would find credentials, without asking AWS."""
    user = user_home(env)
    shared = Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or user / ".aws" / "credentials")
    config = Path(env.get("AWS_CONFIG_FILE") or user / ".aws" / "config")
    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        where = "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
    elif env.get("AWS_WEB_IDENTITY_TOKEN_FILE") and env.get("AWS_ROLE_ARN"):
        where = "AWS_WEB_IDENTITY_TOKEN_FILE (web identity)"
    elif env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI") or env.get(
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
    ):
        where = "the container credentials endpoint"
    elif has_profile(shared):
        where = f"{shared}" + (f" (profile {env['AWS_PROFILE']})" if env.get("AWS_PROFILE") else "")
    elif has_profile(config):
        where = f"{config} (profiles, SSO or roles)"
    else:
        return Check(
            NAME,
            "credentials",
            "missing",
            "none in the environment or ~/.aws",
            "`aws configure` or `aws sso login`, or export AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY",
        )
    return Check(NAME, "credentials", "ok", f"from {where} (not verified: --online)")


def identity() -> str:
    """Who the credentials are (STS GetCallerIdentity: a network call)."""
    import boto3

    return str(boto3.client("sts").get_caller_identity()["Arn"])


def catalog_facts() -> list[Finding]:
    """The installed botocore's enums against the AWS catalog (``infra.clouds.aws.doctor``)."""
    from infra.clouds.aws.doctor import botocore_findings

    return botocore_findings()


CLOUD = Cloud(
    NAME,
    Tool(
        "aws",
        ("--version",),
        "https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html",
    ),
    credentials,
    identity,
    catalog_facts,
)

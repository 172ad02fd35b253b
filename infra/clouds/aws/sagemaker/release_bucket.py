"""A private release bucket for stacks that create their own: encrypted, versioned, TLS only."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws

#: S3 bucket name prefixes are at most 37 characters (the provider appends a unique suffix)
MAX_BUCKET_PREFIX = 37


def bucket_prefix(name: str) -> str:
    """``<name>-releases-`` cut to the 37 characters S3 allows for a prefix."""
    suffix = "-releases-"
    return f"{name[: MAX_BUCKET_PREFIX - len(suffix)].rstrip('-')}{suffix}"


def tls_only_policy(bucket_arn: str) -> dict[str, Any]:
    """Deny every request that does not use TLS."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [bucket_arn, f"{bucket_arn}/*"],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ],
    }


def declare_release_bucket(name: str, parent: pulumi.Resource) -> aws.s3.Bucket:
    """The bucket plus its public access block, versioning, SSE and ownership controls."""
    opts = pulumi.ResourceOptions(parent=parent)
    bucket = aws.s3.Bucket(f"{name}-releases", bucket_prefix=bucket_prefix(name), opts=opts)
    child = pulumi.ResourceOptions(parent=parent, depends_on=[bucket])
    block = aws.s3.BucketPublicAccessBlock(
        f"{name}-releases",
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
        opts=child,
    )
    aws.s3.BucketOwnershipControls(
        f"{name}-releases",
        bucket=bucket.id,
        rule={"object_ownership": "BucketOwnerEnforced"},
        opts=child,
    )
    aws.s3.BucketVersioning(
        f"{name}-releases",
        bucket=bucket.id,
        versioning_configuration={"status": "Enabled"},
        opts=child,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"{name}-releases",
        bucket=bucket.id,
        rules=[
            {
                "apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"},
                "bucket_key_enabled": True,
            }
        ],
        opts=child,
    )
    aws.s3.BucketPolicy(
        f"{name}-releases",
        bucket=bucket.id,
        policy=bucket.arn.apply(lambda arn: json.dumps(tls_only_policy(arn))),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[block]),
    )
    return bucket

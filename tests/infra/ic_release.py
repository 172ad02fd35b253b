"""A published release for sagemaker-ic stacks under mocks: the program declares components
only for copies the release it names holds (issue 37), so tests name one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.local.local_helpers import make_release


def release_holding(sample_repo: Path, dest: Path, *names: str) -> str:
    """The file:// URL of a release in ``dest`` whose manifest lists ``names`` (each the
    sample's first copy, renamed), or the sample's copies when none are given."""
    manifest = make_release(sample_repo, dest, copies=1)
    if names:
        base = manifest.models[0]
        renamed = tuple(
            replace(base, name=n, target_model=f"{n}.tar.gz", archive=f"mme/{n}.tar.gz")
            for n in names
        )
        (dest / "manifest.json").write_text(replace(manifest, models=renamed).to_json())
    return f"file://{dest}"


def upload_release(local: Path) -> str:
    """The s3:// URL of a copy of the release in ``local``, in a fresh bucket of the S3 server
    AWS_ENDPOINT_URL names (moto: the caller sets it and fake credentials)."""
    import uuid

    import boto3

    client = boto3.client("s3", region_name="us-east-1")
    bucket = f"tdk-release-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        client.upload_file(str(path), bucket, f"releases/r1/{path.relative_to(local)}")
    return f"s3://{bucket}/releases/r1"

"""How an EKS pod copies an engine-cache entry: the AWS CLI (the model-sync image), as the
workload's IRSA role.

``aws s3 sync`` and ``aws s3 cp --metadata`` (AWS CLI v2 command reference, s3 cp: "--metadata
(map) A map of metadata to store with the objects in S3"; checked 2026-11-27); the metadata key
``sha256`` is the one tdk's S3 store reads (``packager.stores.s3.SHA_META``).
"""

from __future__ import annotations

import shlex

from infra.k8s.build_job import WORK, StoreCopy
from infra.targets.eks.config import EksConfig
from packager.stores.s3 import SHA_META


def _upload(entry_url: str, name: str, content_type: str) -> str:
    path = shlex.quote(f"{WORK}/{name}")
    dest = shlex.quote(entry_url + name)
    sha = f'"$(cat {path}.sha256)"'
    return (
        f"aws s3 cp {path} {dest} --only-show-errors --content-type {content_type} "
        f"--metadata {SHA_META}={sha}"
    )


def store_copy(config: EksConfig, entry_url: str) -> StoreCopy:
    """Fetch ``<entry>input/`` and upload the engine, then its record (the record last)."""
    upload = " && ".join(
        (
            _upload(entry_url, "model.plan", "application/octet-stream"),
            _upload(entry_url, "plan.json", "application/json"),
        )
    )
    return StoreCopy(
        image=config.model_sync_image,
        fetch=["aws", "s3", "sync", entry_url + "input", WORK, "--only-show-errors"],
        upload=["sh", "-c", upload],
        env={"AWS_REGION": config.region, "AWS_DEFAULT_REGION": config.region},
    )

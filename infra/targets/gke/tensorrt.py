"""How a GKE pod copies an engine-cache entry: the Google Cloud CLI, as the workload's Workload
Identity.

Image: ``gcr.io/google.com/cloudsdktool/google-cloud-cli:stable`` (Google's "Installing the
Google Cloud CLI Docker image": ``:stable`` is the recommended minimal image with gcloud;
checked 2026-11-27). ``gcloud storage rsync --recursive`` and ``gcloud storage cp
--custom-metadata=KEY=VALUE`` (gcloud reference); the metadata key ``sha256`` is the one tdk's
GCS store reads (``packager.stores.gcs.SHA_META``).
"""

from __future__ import annotations

import shlex

from infra.k8s.build_job import WORK, StoreCopy
from infra.targets.gke.config import GkeConfig
from packager.stores.gcs import SHA_META

CLOUD_CLI_IMAGE = "gcr.io/google.com/cloudsdktool/google-cloud-cli:stable"


def _upload(entry_url: str, name: str, content_type: str) -> str:
    path = shlex.quote(f"{WORK}/{name}")
    dest = shlex.quote(entry_url + name)
    sha = f'"$(cat {path}.sha256)"'
    return (
        f"gcloud storage cp {path} {dest} --content-type={content_type} "
        f"--custom-metadata={SHA_META}={sha}"
    )


def store_copy(config: GkeConfig, entry_url: str) -> StoreCopy:
    """Fetch ``<entry>input/`` and upload the engine, then its record (the record last)."""
    del config  # the identity is the workload's ServiceAccount; nothing else differs
    upload = " && ".join(
        (
            _upload(entry_url, "model.plan", "application/octet-stream"),
            _upload(entry_url, "plan.json", "application/json"),
        )
    )
    return StoreCopy(
        image=CLOUD_CLI_IMAGE,
        fetch=["gcloud", "storage", "rsync", "--recursive", entry_url + "input", WORK],
        upload=["sh", "-c", upload],
    )

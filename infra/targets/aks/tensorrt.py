"""How an AKS pod copies an engine-cache entry: the Azure CLI (the model-sync image), logged in
as the build's identity (``az storage blob download-batch`` / ``upload --metadata``,
learn.microsoft.com/cli/azure/storage/blob, read 2026-11-27). The metadata key ``sha256`` is
the one tdk's az:// store reads (``packager.stores.azblob.SHA_META``)."""

from __future__ import annotations

import shlex

from infra.k8s.build_job import WORK, StoreCopy
from infra.targets.aks import builders as b
from infra.targets.aks.config import AksConfig
from packager.stores.azblob import SHA_META
from tdk.errors import UsageError


def _entry(config: AksConfig, entry_url: str) -> str:
    """The entry's path under the release (``entry_url`` is ``<releaseUrl>/engines/.../``):
    the Job's identity may write only the release's own engine cache, so a cache in another
    store (``tdk build --store``) is refused, naming it."""
    root = config.release.url.rstrip("/") + "/"
    if not entry_url.startswith(root):
        raise UsageError(
            f"the build Job reads and writes the engine cache in the stack's release {root}, "
            f"not {entry_url}: its identity may write nothing else",
            hint="build without --store (the cache is the release's), or with --local",
        )
    return entry_url[len(root) :].strip("/")


def _upload(config: AksConfig, entry: str, name: str, content_type: str) -> str:
    blob = config.blob
    path = shlex.quote(f"{WORK}/{name}")
    return (
        "az storage blob upload --auth-mode login --overwrite --no-progress --output none "
        f"--account-name {shlex.quote(blob.account)} --container-name "
        f"{shlex.quote(blob.container)} --name {shlex.quote(blob.name(f'{entry}/{name}'))} "
        f"--file {path} --content-type {content_type} "
        f'--metadata {SHA_META}="$(cat {path}.sha256)"'
    )


def store_copy(config: AksConfig, entry_url: str) -> StoreCopy:
    """Fetch ``<entry>input/`` and upload the engine, then its record (the record last)."""
    entry = _entry(config, entry_url)
    fetch = f"set -eu; {b.login_script()}; {b.download_script(config.blob, entry + '/input', WORK)}"
    upload = " && ".join(
        (
            b.login_script(),
            _upload(config, entry, "model.plan", "application/octet-stream"),
            _upload(config, entry, "plan.json", "application/json"),
        )
    )
    return StoreCopy(
        image=config.model_sync_image,
        fetch=["sh", "-c", fetch],
        upload=["sh", "-c", upload],
        env={"HOME": "/tmp"},
    )

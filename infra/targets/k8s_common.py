"""What the GKE and EKS targets share: a release is required, and how names are derived."""

from __future__ import annotations

from infra.config import ConfigReader, ReleaseLocation, StackConfig, qualify
from tdk.errors import ConfigError


def require_release(common: StackConfig, scheme: str) -> ReleaseLocation:
    """Kubernetes targets serve an existing release: Triton starts from its repository/ tree."""
    if common.release is None:
        raise ConfigError(
            f"{qualify('releaseUrl')} is empty; the {common.target} target serves an existing "
            "release (Triton loads <releaseUrl>/repository at start)",
            hint=f"run `tdk package --dest {scheme}://<bucket>/<prefix>` and set "
            f"`pulumi config set {qualify('releaseUrl')} {scheme}://<bucket>/<prefix>`",
        )
    return common.release


def csv(reader: ConfigReader, key: str) -> tuple[str, ...]:
    """A comma-separated list key ("" is the empty list)."""
    raw = reader.optional_string(key) or ""
    return tuple(item.strip() for item in raw.split(",") if item.strip())

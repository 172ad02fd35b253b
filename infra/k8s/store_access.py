"""How a workload without a cloud identity reads its release: the keys of a Secret the user made
in the workload's namespace, given to every container that reads the store (Triton, the
``mme`` front, a model sync) as environment variables and, where a store's client wants a file,
as a read-only volume.

A target with a cloud identity (IRSA, Workload Identity) has no ``StoreAccess``: its pods read
the release as that identity. Variables in ``expanded`` come after the Secret's and may name
them as ``$(NAME)``: the kubelet expands a reference to a variable defined earlier in the
container's ``env`` list, and leaves one to a later variable as written ("Define Dependent
Environment Variables",
https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/,
read 2026-12-07; its example expands plain values: that a ``secretKeyRef`` variable expands
alike is the kubelet's order of resolution, not shown there), so a value built from a secret
key never appears in a manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: the volume the Secret is mounted from (``StoreAccess.mount_path``)
VOLUME = "store-access"


@dataclass(frozen=True)
class SecretEnv:
    """One environment variable from a key of the Secret; ``optional``: the pod starts when
    the key is missing (a session token that only some credentials carry)."""

    name: str
    key: str
    optional: bool = False


@dataclass(frozen=True)
class StoreAccess:
    """The Secret ``secret`` (in the workload's namespace): its keys as variables (``env``),
    variables built from them (``expanded``: name, value with ``$(NAME)`` references), and,
    where ``mount_path`` is set, its keys as files there."""

    secret: str
    env: tuple[SecretEnv, ...] = ()
    expanded: tuple[tuple[str, str], ...] = ()
    mount_path: str | None = None


def access_env(access: StoreAccess | None) -> list[dict[str, Any]]:
    """The container's ``env`` entries for ``access`` (none without one), the Secret's first."""
    if access is None:
        return []
    from_secret = [
        {
            "name": item.name,
            "valueFrom": {
                "secretKeyRef": {
                    "name": access.secret,
                    "key": item.key,
                    **({"optional": True} if item.optional else {}),
                }
            },
        }
        for item in access.env
    ]
    return from_secret + [{"name": name, "value": value} for name, value in access.expanded]


def access_mounts(access: StoreAccess | None) -> list[dict[str, Any]]:
    """The container's read-only mount of the Secret, where ``access`` wants files."""
    if access is None or access.mount_path is None:
        return []
    return [{"name": VOLUME, "mountPath": access.mount_path, "readOnly": True}]


def access_volumes(access: StoreAccess | None) -> list[dict[str, Any]]:
    """The pod's volume of the Secret, where ``access`` wants files (owner-readable only)."""
    if access is None or access.mount_path is None:
        return []
    return [{"name": VOLUME, "secret": {"secretName": access.secret, "defaultMode": 0o440}}]

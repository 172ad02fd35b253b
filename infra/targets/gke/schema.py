"""``tdk doctor`` for GKE: the release channels the kit offers (``gkeReleaseChannel``,
infra/clouds/gcp/versions.py GKE_CHANNELS) against the values the installed pulumi_gcp documents
as accepted for ``container.Cluster``'s ``release_channel.channel`` (its schema has no enum:
the accepted values are a list in the field's description). Read from the installed package's
source text, not imported (the module is large) and never from the network."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

from infra.clouds.gcp import versions as gke
from infra.targets.base import SchemaDrift

PACKAGE = "pulumi_gcp"
INPUTS = "pulumi_gcp.container._inputs"
BLOCK = "class ClusterReleaseChannelArgsDict"
_VALUE = re.compile(r"^\s*\*\s+([A-Z_]+):")
#: accepted by the provider, deliberately not offered by tdk (a cluster needs a channel)
NOT_OFFERED = frozenset({"UNSPECIFIED"})


def accepted_channels(text: str) -> list[str]:
    """The ``* NAME:`` values of the release-channel description in pulumi_gcp's inputs."""
    start = text.find(BLOCK)
    if start < 0:
        return []
    end = text.find('"""', text.find('"""', start) + 3)
    return [m.group(1) for line in text[start:end].splitlines() if (m := _VALUE.match(line))]


def read_channels() -> tuple[str, list[str]]:
    """(``pulumi_gcp <version> ...``, the accepted channels) from the installed package."""
    spec = importlib.util.find_spec(INPUTS)
    if spec is None or spec.origin is None:
        raise ImportError(f"{INPUTS} is not installed")
    source = f"{PACKAGE} {importlib.metadata.version(PACKAGE)} ClusterReleaseChannel.channel"
    return source, accepted_channels(Path(spec.origin).read_text(encoding="utf-8"))


def channel_drift(source: str, accepted: list[str]) -> SchemaDrift:
    """Channels tdk offers that the provider does not accept, and the reverse."""
    if not accepted:
        return SchemaDrift(source, (f"no accepted values found in {source}: re-read it",))
    return SchemaDrift(
        source,
        tuple(f"gkeReleaseChannel {c}: offered by tdk, not accepted by {source}"
              for c in gke.GKE_CHANNELS if c not in accepted),
        tuple(f"gkeReleaseChannel {c} accepted by {source}: not offered by tdk"
              for c in accepted if c not in gke.GKE_CHANNELS and c not in NOT_OFFERED),
    )  # fmt: skip


def drift() -> list[SchemaDrift]:
    return [channel_drift(*read_channels())]

"""GKE's release channels and the Kubernetes minors each offers, the KEDA chart a channel gets,
and ``tdk doctor --online``'s check of the channels against what GKE itself answers
(``projects.locations.getServerConfig``): the minors each channel offers now."""

from __future__ import annotations

import datetime as dt
from typing import Any

from infra.facts import Source
from infra.facts import kubernetes as kf
from infra.facts.kubernetes import AddonRelease, minor

#: GKE release channels: the Kubernetes minors each offers ("Available minor versions" of the
#: "Current versions" table, GKE_CHANNELS_SOURCE, re-checked 2026-11-27: Rapid 1.34 to 1.37,
#: Regular 1.34 to 1.36, Stable 1.34 to 1.35, Extended 1.31 to 1.36). EXTENDED keeps a minor
#: up to 24 months (extra cost past standard support). `tdk doctor --online` compares them
#: with GKE's getServerConfig.
GKE_CHANNELS_SOURCE = Source(
    "https://cloud.google.com/kubernetes-engine/docs/release-notes", dt.date(2026, 11, 27)
)
GKE_CHANNELS: dict[str, tuple[int, int]] = {
    "RAPID": (34, 37),
    "REGULAR": (34, 36),
    "STABLE": (34, 35),
    "EXTENDED": (31, 36),
}


def keda_for_channel(channel: str) -> AddonRelease:
    """The KEDA chart for a GKE release channel: the newest that supports the channel's newest
    minor (clusters are auto-upgraded up to it); where none does yet, the newest chart, and
    ``tdk doctor`` reports that the channel has passed its tested range."""
    newest = GKE_CHANNELS[channel][1]
    fits = [r for r in kf.KEDA_RELEASES if r.supports(newest)]
    return fits[0] if fits else kf.KEDA_RELEASES[0]


API = "container.projects.locations.getServerConfig"
ENDPOINT = (
    "https://container.googleapis.com/v1/projects/{project}/locations/{location}/serverConfig"
)


def server_config(session: Any, project: str, location: str) -> dict[str, Any]:
    """The server config of ``location`` (an AuthorizedSession's GET; raises on HTTP errors)."""
    response = session.get(ENDPOINT.format(project=project, location=location), timeout=30)
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


def drift(answer: dict[str, Any]) -> list[str]:
    """Channels whose offered minors differ from GKE_CHANNELS (above)."""
    out = []
    for row in answer.get("channels", []):
        channel = str(row.get("channel", ""))
        minors = sorted({minor(v) for v in row.get("validVersions", []) if "." in v})
        if channel not in GKE_CHANNELS or not minors:
            continue
        ours = GKE_CHANNELS[channel]
        if (minors[0], minors[-1]) != ours:
            out.append(f"{channel} offers 1.{minors[0]}-1.{minors[-1]} per GKE, "
                       f"1.{ours[0]}-1.{ours[1]} in the kit")  # fmt: skip
    return out

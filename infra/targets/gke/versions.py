"""``tdk doctor --online`` for GKE: the kit's release-channel table against what GKE itself
answers (``projects.locations.getServerConfig``): the minors each channel offers now."""

from __future__ import annotations

from typing import Any

from infra.facts import kubernetes as kf

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
    """Channels whose offered minors differ from GKE_CHANNELS (infra/facts/kubernetes.py)."""
    out = []
    for row in answer.get("channels", []):
        channel = str(row.get("channel", ""))
        minors = sorted({kf.minor(v) for v in row.get("validVersions", []) if "." in v})
        if channel not in kf.GKE_CHANNELS or not minors:
            continue
        ours = kf.GKE_CHANNELS[channel]
        if (minors[0], minors[-1]) != ours:
            out.append(f"{channel} offers 1.{minors[0]}-1.{minors[-1]} per GKE, "
                       f"1.{ours[0]}-1.{ours[1]} in the kit")  # fmt: skip
    return out

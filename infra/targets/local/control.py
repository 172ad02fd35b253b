"""The running local endpoint's HTTP control client: its ``/tdk/status`` document and a release
switch (``/tdk/switch``, authorised by the control token in its state file)."""

from __future__ import annotations

import json as jsonlib
import urllib.error
import urllib.request
from contextlib import closing
from typing import Any

from tdk.errors import TdkError


def fetch_status(
    url: str, hint: str = "see the endpoint's log", error: type[TdkError] = TdkError
) -> dict[str, Any]:
    """The running endpoint's ``/tdk/status`` document; ``error`` with ``hint`` when it cannot
    be read (the CLI's commands and LocalClient share this one reader)."""
    try:
        with urllib.request.urlopen(f"{url}/tdk/status", timeout=10) as response:
            return dict(jsonlib.loads(response.read()))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise error(f"cannot read {url}/tdk/status: {exc}", hint=hint) from exc


def request_switch(state: Any, release: str, endpoint_url: str | None) -> dict[str, Any]:
    """POST the switch to the running endpoint; its answer, or TdkError with its reason."""
    body = jsonlib.dumps({"release": release, "endpoint_url": endpoint_url}).encode()
    request = urllib.request.Request(
        f"{state.url}/tdk/switch",
        data=body,
        method="POST",
        headers={"content-type": "application/json", "x-tdk-control": state.control},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return dict(jsonlib.loads(response.read()))
    except urllib.error.HTTPError as exc:
        with closing(exc):
            answer = jsonlib.loads(exc.read() or b"{}")
        reason = str(answer.get("error", exc.reason))
        raise TdkError(
            reason if reason.startswith("not switched") else f"not switched: {reason}",
            hint=answer.get("hint") or f"the endpoint still serves its release; see {state.log}",
        ) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise TdkError(
            f"cannot reach {state.url}/tdk/switch: {exc}", hint="see the endpoint's log"
        ) from exc

"""Google Cloud as this machine reaches it (the gke target's ``cloud``).

Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, then the gcloud ADC file),
checked 2026-11-26: https://cloud.google.com/docs/authentication/application-default-credentials
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from infra.facts.machine import Check, Cloud, Tool, user_home

NAME = "gcp"


def credentials(env: Mapping[str, str]) -> Check:
    """Application Default Credentials as Google's libraries find them, without asking Google."""
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS") or env.get("GOOGLE_CREDENTIALS")
    config = Path(env.get("CLOUDSDK_CONFIG") or user_home(env) / ".config" / "gcloud")
    adc = config / "application_default_credentials.json"
    if named and env.get("GOOGLE_CREDENTIALS") == named and not Path(named).is_file():
        return Check(NAME, "credentials", "ok", "from GOOGLE_CREDENTIALS (not verified)")
    if named:
        if Path(named).is_file():
            return Check(NAME, "credentials", "ok", f"from {named} (not verified: --online)")
        return Check(
            NAME,
            "credentials",
            "missing",
            f"GOOGLE_APPLICATION_CREDENTIALS names {named}, which does not exist",
            "point it at a key file, or unset it and run `gcloud auth application-default login`",
        )
    if adc.is_file():
        return Check(NAME, "credentials", "ok", f"from {adc} (not verified: --online)")
    return Check(
        NAME,
        "credentials",
        "missing",
        "no Application Default Credentials",
        "`gcloud auth application-default login`",
    )


def identity() -> str:
    """The project the credentials belong to (a token refresh: a network call)."""
    import google.auth
    import google.auth.transport.requests

    credentials, project = google.auth.default()
    credentials.refresh(google.auth.transport.requests.Request())
    return f"project {project or '(none set)'}"


CLOUD = Cloud(
    NAME,
    Tool("gcloud", ("--version",), "https://cloud.google.com/sdk/docs/install", "VERSION"),
    credentials,
    identity,
)

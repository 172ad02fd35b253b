"""Azure as this machine reaches it (the aks target's ``cloud``): the ``az`` CLI, where the
azure-native provider would find credentials (environment and files only), and who they are
(``az account show``, a network call, for ``tdk doctor --online``).

Where the azure-native provider looks for credentials (checked 2026-11-27,
https://www.pulumi.com/registry/packages/azure-native/installation-configuration/): the
``ARM_CLIENT_ID`` / ``ARM_TENANT_ID`` service principal variables (with ``ARM_CLIENT_SECRET``,
a certificate, OIDC or ``ARM_USE_MSI``), else the Azure CLI's login (``az login``: the
profile ``azureProfile.json`` under ``AZURE_CONFIG_DIR``, default ``~/.azure``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from infra.facts.machine import CREDENTIALS_MAX_BYTES, Check, Cloud, Tool, user_home
from tdk import bounded

NAME = "azure"
AZ = Tool("az", ("--version",), "https://learn.microsoft.com/cli/azure/install-azure-cli")
TIMEOUT_S = 60
_SP_SECRETS = ("ARM_CLIENT_SECRET", "ARM_CLIENT_CERTIFICATE_PATH", "ARM_OIDC_TOKEN",
               "ARM_OIDC_TOKEN_FILE_PATH", "ARM_USE_OIDC")  # fmt: skip


def _profile(env: Mapping[str, str]) -> Path:
    return Path(env.get("AZURE_CONFIG_DIR") or user_home(env) / ".azure") / "azureProfile.json"


def _logged_in(profile: Path) -> str:
    """The default subscription's name in an ``az login`` profile ("" when none)."""
    try:
        raw = bounded.read_bounded(profile, CREDENTIALS_MAX_BYTES)
        data = json.loads(raw.decode("utf-8-sig"))
    except (OSError, ValueError, bounded.DocumentError):
        return ""
    subscriptions = data.get("subscriptions") if isinstance(data, dict) else None
    for row in subscriptions if isinstance(subscriptions, list) else []:
        if isinstance(row, dict) and row.get("isDefault"):
            return str(row.get("name") or row.get("id") or "default subscription")
    return ""


def credentials(env: Mapping[str, str]) -> Check:
    """Where the azure-native provider would get credentials, without a network call."""
    if env.get("ARM_CLIENT_ID") and env.get("ARM_TENANT_ID"):
        if any(env.get(k) for k in _SP_SECRETS) or env.get("ARM_USE_MSI", "").lower() == "true":
            where = "a service principal from ARM_* variables (not verified: --online)"
            return Check(NAME, "credentials", "ok", where)
        return Check(NAME, "credentials", "missing",
                     "ARM_CLIENT_ID is set but no secret, certificate, OIDC token or MSI",
                     "set ARM_CLIENT_SECRET (or ARM_USE_OIDC / ARM_USE_MSI), or unset "
                     "ARM_CLIENT_ID to use `az login`")  # fmt: skip
    profile = _profile(env)
    subscription = _logged_in(profile)
    if subscription:
        where = f"az login ({subscription}, {profile}; not verified: --online)"
        return Check(NAME, "credentials", "ok", where)
    return Check(NAME, "credentials", "missing", f"no az login ({profile}), no ARM_* variables",
                 "run `az login` and `az account set --subscription <id>`")  # fmt: skip


def az_json(args: list[str]) -> str:
    """``az ARGS --output json``'s stdout; RuntimeError with its last stderr line on failure."""
    path = shutil.which("az")
    if path is None:
        raise RuntimeError(f"az is not on PATH ({AZ.install})")
    done = subprocess.run([path, *args, "--output", "json"], capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)  # fmt: skip
    if done.returncode != 0:
        lines = (done.stderr or "").strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"az {' '.join(args)} failed")
    return done.stdout


def identity(run: Callable[[list[str]], str] = az_json) -> str:
    """Who the Azure CLI is logged in as, and in which subscription (a network call)."""
    account = json.loads(run(["account", "show"]))
    if not isinstance(account, dict):
        raise RuntimeError("az account show answered no account")
    found = account.get("user")
    user: dict[str, object] = found if isinstance(found, dict) else {}
    return f"{user.get('name', '?')} in {account.get('name', '?')} ({account.get('id', '?')})"


CLOUD = Cloud(NAME, AZ, credentials, identity)

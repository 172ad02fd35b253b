"""What ``tdk doctor`` checks on the user's machine: the command-line tools a deploy needs (and
their versions), the Pulumi state backend, and each cloud's credentials: where they would come
from, read from environment variables and files only (no network call unless ``online``).
SkyPilot's ``sky check`` is the model: per cloud, what works and what to fix. A cloud is the
hook its targets give (``TargetEntry.cloud``, a ``Cloud``: its CLI and credential checks, in
``infra/clouds/<cloud>.py`` or the target's folder); nothing here names one.

Where each tool is looked up (checked 2026-11-26):
- Pulumi backends and secrets passphrase (``pulumi login``, ``--local``, PULUMI_ACCESS_TOKEN,
  PULUMI_CONFIG_PASSPHRASE[_FILE]): https://www.pulumi.com/docs/iac/concepts/state-and-backends/
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from infra.facts import INFRA_EXTRA_INSTALL
from tdk import bounded

if TYPE_CHECKING:
    from infra.facts.findings import Finding

VERSION_TIMEOUT_S = 20


@dataclass(frozen=True)
class Check:
    """One thing on this machine: ok / missing (a deploy needs it) / optional, and the fix."""

    scope: str  # "tools", "pulumi", or a cloud's name (``Cloud.name``)
    check: str
    status: str
    value: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Tool:
    command: str
    version_args: tuple[str, ...]
    install: str  # where to get it (a URL: these are not on PyPI)
    version_file: str = ""  # a file beside bin/ that holds the version (Google Cloud SDK)


TOOLS: Mapping[str, Tool] = {
    "pulumi": Tool(
        "pulumi", ("version",), "https://www.pulumi.com/docs/iac/download-install/ (not on PyPI)"
    ),
    "kubectl": Tool(
        "kubectl", ("version", "--client"), "https://kubernetes.io/docs/tasks/tools/#kubectl"
    ),
    "helm": Tool("helm", ("version", "--short"), "https://helm.sh/docs/intro/install/"),
}


@dataclass(frozen=True)
class Cloud:
    """A cloud as this machine reaches it: a target's hook (``TargetEntry.cloud``). Its name
    (the scope of its checks), its own CLI (kubeconfig, SSO logins: the Pulumi providers need
    only credentials), where its SDK would find credentials (environment and files only) and,
    for ``--online``, who they are (a network call); and ``tdk doctor``'s facts of its catalog
    against what its installed SDK lists (None: nothing to compare)."""

    name: str
    cli: Tool
    credentials: Callable[[Mapping[str, str]], Check]
    identity: Callable[[], str]
    catalog_facts: Callable[[], list[Finding]] | None = None


def tool_version(tool: Tool, which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The first line ``NAME --version`` prints; None when the tool is not on PATH."""
    name = tool.command
    path = which(tool.command)
    if path is None:
        return None
    if tool.version_file:  # the SDK records its version: faster than starting its Python
        recorded = Path(path).resolve().parents[1] / tool.version_file
        if recorded.is_file():
            return f"{tool.version_file.lower()} {recorded.read_text().strip()}"
    try:
        done = subprocess.run(
            [path, *tool.version_args],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"present ({path}) but `{name} {' '.join(tool.version_args)}` failed: {exc}"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else f"present ({path})"


def tool_check(tool: Tool, needed_by: list[str], which: Callable[[str], str | None]) -> Check:
    name = tool.command
    version = tool_version(tool, which)
    who = ", ".join(needed_by)
    if version is not None:
        return Check("tools", name, "ok", version)
    status = "missing" if needed_by else "optional"
    why = f"needed by {who}" if needed_by else "not needed by these stacks"
    return Check("tools", name, status, f"not on PATH ({why})", f"install: {tool.install}")


def user_home(env: Mapping[str, str]) -> Path:
    """The user's home as the cloud SDKs see it (``HOME``)."""
    return Path(env.get("HOME") or Path.home())


CREDENTIALS_MAX_BYTES = 1024 * 1024  # a credentials file holds a few logins
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _pulumi_current(path: Path) -> tuple[str, str]:
    """(the ``current`` backend URL of Pulumi's ``credentials.json``, "") or ("", why the
    file cannot say): read bounded, shapes checked (``[]``, ``"x"``, ``{"current": 5}``)."""
    if not path.exists():
        return "", ""
    try:
        data = bounded.load_json(path, "", limit=CREDENTIALS_MAX_BYTES)
    except bounded.DocumentError as exc:
        return "", exc.reason
    if not isinstance(data, dict):
        kind = _JSON_KINDS.get(type(data), "value")
        return "", f"holds a JSON {kind}, not the object `pulumi login` writes"
    current = data.get("current") or ""
    if not isinstance(current, str):
        return "", f"its current is {current!r}, not a backend URL"
    return current, ""


def pulumi_backend(env: Mapping[str, str]) -> Check:
    """Where Pulumi keeps state (``pulumi login``) and, for a self-managed backend, whether a
    secrets passphrase is set: read from the environment and ``~/.pulumi/credentials.json``."""
    url = env.get("PULUMI_BACKEND_URL", "")
    home = Path(env.get("PULUMI_HOME") or user_home(env) / ".pulumi")
    if not url:
        url, problem = _pulumi_current(home / "credentials.json")
        if problem:
            return Check(
                "pulumi",
                "state backend",
                "missing",
                f"{home / 'credentials.json'}: {problem}",
                "`pulumi login` again (it rewrites the file), or set PULUMI_BACKEND_URL",
            )
    if not url and env.get("PULUMI_ACCESS_TOKEN"):
        url = "https://api.pulumi.com (PULUMI_ACCESS_TOKEN)"
    if not url:
        return Check(
            "pulumi",
            "state backend",
            "missing",
            "not logged in",
            "`pulumi login` (Pulumi Cloud) or `pulumi login --local` with "
            "PULUMI_CONFIG_PASSPHRASE set",
        )
    self_managed = not url.startswith("https://api.pulumi.com")
    passphrase = env.get("PULUMI_CONFIG_PASSPHRASE") is not None or bool(
        env.get("PULUMI_CONFIG_PASSPHRASE_FILE")
    )
    if self_managed and not passphrase:
        return Check(
            "pulumi",
            "state backend",
            "missing",
            f"{url}: no secrets passphrase",
            "export PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)",
        )
    return Check("pulumi", "state backend", "ok", url)


def has_profile(path: Path) -> bool:
    """Whether an INI credentials or config file names a profile (``[name]``): read bounded,
    only when a regular file (``AWS_SHARED_CREDENTIALS_FILE=/dev/zero`` was a MemoryError)."""
    try:
        return b"[" in bounded.read_bounded(path, CREDENTIALS_MAX_BYTES)
    except OSError:
        return False


def verify_online(cloud: Cloud) -> Check:
    """Ask the cloud who the credentials are (``--online`` only: a network call)."""
    try:
        who = cloud.identity()
    except Exception as exc:  # every failure (no network, expired token) is the user's to read
        return Check(cloud.name, "credentials (online)", "missing", f"{type(exc).__name__}: {exc}")
    return Check(cloud.name, "credentials (online)", "ok", who)


#: the distribution whose ``infra`` extra holds what the stacks' Pulumi program imports
KIT, PROGRAM_EXTRA = "triton-deploy-kit", "infra"
PROGRAM_FIX = f"{INFRA_EXTRA_INSTALL} (`make demo` installs the kit alone, without its extras)"


def program_requirements() -> list[str]:
    """The distributions of the kit's ``infra`` extra (Pulumi's SDK and providers), read from
    the installed kit's metadata: the one list is pyproject.toml's."""
    try:
        requires = importlib.metadata.requires(KIT) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    marker = re.compile(rf"extra\s*==\s*['\"]{PROGRAM_EXTRA}['\"]")
    found = (
        re.match(r"[A-Za-z0-9._-]+", r.split(";")[0].strip()) for r in requires if marker.search(r)
    )
    return [m.group(0) for m in found if m]


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def program_packages(wanted: list[str], is_installed: Callable[[str], bool] = installed) -> Check:
    """Whether the Python that runs tdk (the ``.venv`` Pulumi.yaml names) holds the Pulumi
    program's packages: without them `pulumi preview` fails on its first import."""
    missing = [name for name in wanted if not is_installed(name)]
    if missing:
        return Check(
            "pulumi",
            "program packages",
            "missing",
            f"not installed: {', '.join(missing)}",
            PROGRAM_FIX,
        )
    return Check(
        "pulumi", "program packages", "ok", f"{len(wanted)} installed ({PROGRAM_EXTRA} extra)"
    )


@dataclass(frozen=True)
class Needs:
    """What deploying one stack takes from this machine: its target, the cloud whose
    credentials its provider reads (its target's ``Cloud``; None: none), and whether it runs
    on Kubernetes."""

    stack: str
    target: str
    cloud: Cloud | None
    kubernetes: bool


def survey(
    needs: list[Needs],
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    online: bool = False,
    is_installed: Callable[[str], bool] = installed,
    clouds: Sequence[Cloud] = (),
) -> list[Check]:
    """Every machine check the stacks in ``needs`` call for (tools, the Pulumi program's
    packages and state backend, credentials); ``clouds`` (every registered target's) adds
    their CLIs as optional where no stack needs them."""
    env = os.environ if env is None else env
    needed = list({n.cloud.name: n.cloud for n in needs if n.cloud}.values())
    tools = [*TOOLS.values(), *{c.cli.command: c.cli for c in [*clouds, *needed]}.values()]
    users: dict[str, list[str]] = {tool.command: [] for tool in tools}
    for need in needs:
        users["pulumi"].append(need.stack)
        if need.kubernetes:
            users["kubectl"].append(need.stack)
        if need.cloud:
            users[need.cloud.cli.command].append(need.stack)
    with ThreadPoolExecutor(len(tools)) as pool:  # each version probe starts a program
        checks = list(pool.map(lambda tool: tool_check(tool, users[tool.command], which), tools))
    if needs:
        checks.append(program_packages(program_requirements(), is_installed))
        checks.append(pulumi_backend(env))
    for cloud in needed:
        found = cloud.credentials(env)
        checks.append(found)
        if online and found.status == "ok":
            checks.append(verify_online(cloud))
    return checks


def cloud_summary(needs: list[Needs], checks: list[Check]) -> list[tuple[str, str, str, str]]:
    """Per cloud, ``sky check`` style: (cloud, ready / not ready, its stacks, what to fix)."""
    rows = []
    common = [c for c in checks if c.status == "missing" and "pulumi" in (c.scope, c.check)]
    for cloud in dict.fromkeys(n.cloud.name for n in needs if n.cloud):
        mine = [n for n in needs if n.cloud and n.cloud.name == cloud]
        tools = {"kubectl"} if any(n.kubernetes for n in mine) else set()
        blocking = [*common]
        blocking += [c for c in checks if c.status == "missing" and c.scope == cloud]
        blocking += [c for c in checks if c.status == "missing" and c.check in tools]
        stacks = ", ".join(n.stack for n in mine)
        fixes = ", ".join(f"{c.scope} {c.check}" for c in blocking)
        rows.append((cloud, "not ready" if blocking else "ready", stacks, fixes))
    return rows

"""Where a deployment is, opened once: what the user gave (``Given``: plain strings, the
``--stack``) made into the located deployment (``Deployment``: its target, the target's own
locator, the release it serves, that release's manifest and the clients). ``--stack`` names the
target, and the stack's config and, once deployed, its outputs (``pulumi stack output --json``,
or a file of it given as ``outputs``) name what the target's locator reads from it.

One function, ``open_deployment``, for every command that says where a deployment is (invoke,
bench, metrics, endpoint status/wait). What the user gave wins over what the stack says, except
for what names the deployment itself: a target or endpoint that disagrees with the stack is an
error naming both, never a silent choice; a field the target does not take is refused, naming
its option. The release is decided in one place, ``Deployment.release``: the user's, else the
stack's, else the target's default (the local endpoint's own).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tdk.bounded import DocumentError, load_json
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.base import InferenceTarget
    from infra.clients.generate import Generator
    from infra.targets.operations import Locator
    from infra.targets.stacks import StackSettings
    from packager.manifest import Manifest, ManifestModel


@dataclass(frozen=True)
class Given:
    """What the user said of where a deployment is, as plain strings (None: not given). The
    locator's fields (``endpoint``, ``region``, ``url``, ``prometheus_url``, ``workspace_id``)
    go to the target's ``Locator``, which refuses one its target does not take."""

    target: str | None = None
    stack: str | None = None
    project_dir: Path = Path(".")
    #: a ``pulumi stack output --json`` file of the stack (None: ask the pulumi CLI)
    outputs: Path | None = None
    #: the release URL (``tdk package --release``) whose manifest describes the models
    release: str | None = None
    #: an S3-compatible store's endpoint for the release (MinIO, moto, ...)
    s3_endpoint_url: str | None = None
    endpoint: str | None = None
    region: str | None = None
    url: str | None = None
    prometheus_url: str | None = None
    workspace_id: str | None = None

    def located(self) -> dict[str, str]:
        """The locator fields given (name -> value)."""
        named = ("endpoint", "region", "url", "prometheus_url", "workspace_id")
        return {
            name: getattr(self, name) for name in named if getattr(self, name) not in (None, "")
        }


#: seconds ``pulumi stack output`` may take (it reads the state backend)
PULUMI_TIMEOUT_S = 60.0
#: where a target goes when neither ``--target`` nor ``--stack`` is given
DEFAULT_TARGET = "local"


def read_outputs(path: Path) -> dict[str, Any]:
    """A ``pulumi stack output --json`` file (``--outputs``) as a mapping."""
    try:
        data = load_json(path, "")
    except DocumentError as exc:
        raise UsageError(
            f"--outputs {path}: cannot read it as JSON ({exc.reason})",
            hint=f"write it with `pulumi stack output --json > {path}`",
        ) from None
    if not isinstance(data, dict):
        raise UsageError(
            f"--outputs {path}: expected a JSON object",
            hint=f"write it with `pulumi stack output --json > {path}`",
        )
    return data


def pulumi_outputs(project_dir: Path, stack: str) -> dict[str, Any]:
    """The deployed stack's outputs through the Pulumi CLI; empty when the CLI is missing or
    the stack is not deployed (its config then says what it can)."""
    pulumi = shutil.which("pulumi")
    if pulumi is None:
        return {}
    command = [pulumi, "stack", "output", "--json", "--stack", stack, "--cwd", str(project_dir)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PULUMI_TIMEOUT_S, check=False
        )
        data = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    return data if isinstance(data, dict) else {}


def locator(
    target: str,
    given: Mapping[str, Any],
    stack: StackSettings | None = None,
    outputs: Mapping[str, Any] | None = None,
) -> Locator:
    """``target``'s own locator (its client module's ``LOCATOR``) from ``given`` (field name ->
    value) over what ``stack`` and its ``outputs`` name; a field the target does not take is
    refused, naming its option, what the target takes and the targets that take it."""
    from infra.targets import registry

    entry = registry.get(target)
    kind = entry.locator()
    takes = kind.takes()
    for name, value in given.items():
        if value not in (None, "") and name not in takes:
            raise _not_taken(entry.name, name, [t for t in takes if t in given])
    return kind.build(entry.name, given, stack, outputs)


def _not_taken(target: str, name: str, takes: list[str]) -> UsageError:
    """The refusal of field ``name`` by ``target``'s locator: what it takes instead, and which
    targets take it (the registry's)."""
    from infra.targets.operations import flag

    hint = f"drop {flag(name)}"
    if takes:
        hint += f" (--target {target} takes {', '.join(flag(t) for t in takes)})"
    others = takers(name)
    if others:
        hint += f"; {flag(name)} locates --target {', '.join(others)}"
    return UsageError(f"{flag(name)} is not an option of --target {target}", hint=hint)


def takers(name: str) -> list[str]:
    """The registered targets whose locator takes the field ``name``."""
    from infra.targets import registry

    return [entry.name for entry in registry.entries() if name in entry.locator().takes()]


def load_manifest(release: str, s3_endpoint_url: str | None = None) -> Manifest:
    """The manifest of the release at ``release``, read with the size and nesting limits."""
    from packager.stores import open_store
    from packager.stores.capped import read_manifest

    return read_manifest(open_store(release, s3_endpoint_url))


def find_model(manifest: Manifest, name: str) -> ManifestModel:
    """A model copy by its archive name (TargetModel) or its Triton name (every target
    addresses a copy by either)."""
    if not name.endswith(".tar.gz"):
        return manifest.by_name(name)
    return manifest.by_target_model(name)


@dataclass(frozen=True)
class Deployment:
    """A located deployment: the target's name and locator, the release it serves, that
    release's manifest (read once, when first asked) and the clients that reach it."""

    target: str
    where: Locator
    #: the release the user gave, else the one the stack names (None: the target's default)
    named_release: str | None = None
    s3_endpoint_url: str | None = field(default=None, repr=False)

    @property
    def release(self) -> str:
        """The release URL: the user's, else the stack's, else the target's default (the local
        endpoint's own); a UsageError when there is none."""
        release = self.named_release or self.where.default_release()
        if release is None:
            raise UsageError(f"--target {self.target} needs --release", hint="pass the release URL")
        return release

    @cached_property
    def manifest(self) -> Manifest:
        return load_manifest(self.release, self.s3_endpoint_url)

    def model(self, name: str) -> ManifestModel:
        """The model copy ``name`` (archive or Triton name) in the release's manifest."""
        return find_model(self.manifest, name)

    def inference(self, grpc: bool, timeout: float) -> InferenceTarget:
        """Where tensor requests go; each ends within ``timeout`` seconds in total."""
        return self.where.inference(grpc, timeout)

    def generator(self, model: ManifestModel, timeout: float) -> Generator:
        """A generate client for ``model``: the target's own route (``Locator.generator``:
        Triton's address as given, ``url``, or its own API), else the URL its client reports
        (the local endpoint's)."""
        from infra.clients.generate import GenerateClient

        hint = (
            "pass --url with Triton's HTTP address (e.g. after `kubectl port-forward "
            "svc/<workload> 8000:8000`: --url http://127.0.0.1:8000); SageMaker MME does not "
            "serve decoupled models"
        )
        try:
            own = self.where.generator(model, timeout)  # e.g. sagemaker-ic's response streams
            if own is not None:
                return own
            url = self.where.client().where().get("url")
        except UsageError as exc:
            raise UsageError(
                f"{exc.message} (or --url, Triton's HTTP address, for the generate endpoint)",
                exc.hint or hint,
            ) from None
        if not url:
            raise UsageError(
                f"--target {self.target} has no generate endpoint to reach without --url", hint
            )
        return GenerateClient(url, model.name, timeout)


def open_deployment(given: Given) -> Deployment:
    """The deployment ``given`` locates: with ``given.stack``, the stack's target's, from what
    the stack names with what the user gave over it (a conflicting target or endpoint is an
    error naming both); without, ``given.target``'s (local by default) from ``given`` alone."""
    from infra.targets import registry, stacks

    if given.stack is None:
        if given.outputs is not None:
            raise UsageError("--outputs needs --stack", hint="pass the stack the outputs belong to")
        target = given.target or DEFAULT_TARGET
        where = locator(target, given.located())
        return Deployment(where.target, where, given.release, given.s3_endpoint_url)
    stacks.check_stack_name(given.stack)
    settings = stacks.load_stack(given.project_dir, given.stack)
    found = settings.entry.name
    if given.target is not None and registry.get(given.target).name != found:
        raise UsageError(
            f"--target {given.target} and --stack {given.stack} disagree: the stack deploys to "
            f"{found}",
            hint=f"drop --target (the stack names its target), or pass a {given.target} stack",
        )
    if given.outputs:
        values = read_outputs(given.outputs)
    else:
        values = pulumi_outputs(given.project_dir, given.stack)
    where = locator(found, given.located(), settings, values)
    release = given.release or _stack_release(settings, values)
    return Deployment(where.target, where, release, given.s3_endpoint_url)


def _stack_release(settings: StackSettings, outputs: Mapping[str, Any]) -> str | None:
    """The release a stack serves: its ``releaseUrl`` output once deployed, else its config."""
    from infra.targets.operations import output_text

    release = settings.common.release
    return output_text(outputs, "releaseUrl") or (release.url if release else None)

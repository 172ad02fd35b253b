"""Run the real Pulumi program (``infra/``) under mocks, per committed stack file.

``run_stack("sagemaker-dev")`` does what the Pulumi CLI does before it starts the program:
take each key's default from ``Pulumi.yaml``, apply ``Pulumi.<stack>.yaml`` over it (plus any
overrides), then runs ``runpy.run_path("infra", run_name="__main__")`` with
``pulumi.runtime.set_mocks`` and returns every declared resource and the stack outputs.
"""

from __future__ import annotations

import asyncio
import importlib
import runpy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from infra.config import merged_stack_config

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "triton-deploy-kit"


@dataclass(frozen=True)
class Options:
    """What the engine receives besides inputs: the resource options tests check."""

    urn: str = ""
    #: URNs this resource waits for (explicit depends_on, component dependencies expanded)
    dependencies: tuple[str, ...] = ()
    ignore_changes: tuple[str, ...] = ()
    #: customTimeouts as sent to the engine ("" when unset)
    create_timeout: str = ""
    update_timeout: str = ""
    #: the parent URNs this resource's aliases name (a resource moved to another component)
    alias_parents: tuple[str, ...] = ()
    #: (type token, name) each alias names, "" where it keeps the resource's own (a resource
    #: renamed or retyped keeps its deployed state through them)
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Declared:
    """One resource the program declared: its type token, name, resolved inputs, options."""

    type: str
    name: str
    inputs: dict[str, Any]
    options: Options = field(default_factory=Options)


@dataclass
class StackRun:
    """Everything one run of the program declared, with helpers to find resources."""

    resources: list[Declared]
    outputs: dict[str, Any] = field(default_factory=dict)
    #: what the program raised (only with ``expect_error=True``)
    error: BaseException | None = None

    def of_type(self, type_token: str) -> list[Declared]:
        return [r for r in self.resources if r.type == type_token]

    def one(self, type_token: str) -> Declared:
        found = self.of_type(type_token)
        assert len(found) == 1, f"expected one {type_token}, got {[r.name for r in found]}"
        return found[0]

    def types(self) -> set[str]:
        return {r.type for r in self.resources}

    def named(self, name: str) -> Declared:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"expected one resource named {name}, got {len(found)}"
        return found[0]


def stack_config(stack_name: str, overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """Pulumi.yaml defaults, then the stack file, then ``overrides`` (keys may be unqualified)."""
    return merged_stack_config(ROOT, stack_name, overrides)


class _Monitor(MockMonitor):
    """The mock engine, also keeping each registration's options for ``Declared.options``."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__(recorder)
        self.recorder = recorder

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        timeouts = request.customTimeouts
        self.recorder.options[(request.type, request.name)] = Options(
            urn=response.urn,
            dependencies=tuple(request.dependencies),
            ignore_changes=tuple(request.ignoreChanges),
            create_timeout=timeouts.create if timeouts else "",
            update_timeout=timeouts.update if timeouts else "",
            alias_parents=tuple(
                alias.spec.parentUrn
                for alias in request.aliases
                if alias.HasField("spec") and alias.spec.parentUrn
            ),
            aliases=tuple(
                (alias.spec.type, alias.spec.name)
                for alias in request.aliases
                if alias.HasField("spec") and (alias.spec.type or alias.spec.name)
            ),
        )
        return response


def _no_reports(type_token: str, name: str, state: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ProviderMocks:
    """What one cloud's providers answer under mocks beyond echoing a resource's inputs.

    A target's tests declare it as ``MOCKS`` in ``mocks.py`` of the tests folder that mirrors
    the package owning the target or its cloud (``infra/targets/<name>/`` ->
    ``tests/targets/<name>/mocks.py``, ``infra/clouds/aws/`` -> ``tests/clouds/aws/mocks.py``);
    the harness finds them through the registry (``provider_mocks``), so a new target adds its
    answers in its own test folder.
    """

    #: a provider function's token -> its answer from the call's arguments (reads only: a
    #: call with a side effect at declaration time is a bug the harness reports)
    reads: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    #: what the cloud creates and reports for a resource (outputs that are not inputs):
    #: ``(type token, name, echoed state) -> outputs`` laid over the state
    reports: Callable[[str, str, Mapping[str, Any]], dict[str, Any]] = _no_reports


def mocks_modules() -> list[str]:
    """The ``mocks`` modules of the registered targets' tests: for each target's package and
    its cloud's, the same path under ``tests`` (those that exist)."""
    from infra.targets import registry

    packages: dict[str, None] = {}
    for entry in registry.entries():
        modules = [type(entry).__module__]
        if entry.cloud is not None:
            modules.append(entry.cloud.credentials.__module__)
        for module in modules:
            package = module.rpartition(".")[0]
            packages["tests." + package.removeprefix("infra.").removeprefix("tests.")] = None
    return [f"{p}.mocks" for p in packages if (ROOT / p.replace(".", "/") / "mocks.py").is_file()]


@cache
def provider_mocks() -> tuple[ProviderMocks, ...]:
    """Every registered target's (and cloud's) ``MOCKS``."""
    return tuple(importlib.import_module(module).MOCKS for module in mocks_modules())


#: a sample digest the mocked docker-build provider reports for a pushed image
IMAGE_DIGEST = "sha256:" + "ab" * 32


def _shared_reports(type_token: str, state: Mapping[str, Any]) -> dict[str, Any]:
    """What providers no cloud owns report: docker-build's pushed image, its digest and ``ref``
    (the first tag with the digest, as the provider documents it)."""
    if type_token != "docker-build:index:Image" or not state.get("push"):
        return {}
    return {"digest": IMAGE_DIGEST, "ref": f"{state['tags'][0]}@{IMAGE_DIGEST}"}


class _Recorder(pulumi.runtime.Mocks):
    """Records every resource; echoes inputs back with an id, an ARN and a name."""

    def __init__(self) -> None:
        self.declared: list[tuple[str, str, dict[str, Any]]] = []
        self.options: dict[tuple[str, str], Options] = {}

    @property
    def resources(self) -> list[Declared]:
        return [
            Declared(typ, name, inputs, self.options.get((typ, name), Options()))
            for typ, name, inputs in self.declared
        ]

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.declared.append((args.typ, args.name, dict(args.inputs)))
        state = dict(args.inputs)
        state.setdefault("name", args.name)
        for mocks in provider_mocks():
            state.update(mocks.reports(args.typ, args.name, state))
        state.update(_shared_reports(args.typ, state))
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        for mocks in provider_mocks():
            if args.token in mocks.reads:  # a read, no side effect
                return mocks.reads[args.token](args.args), []
        raise AssertionError(f"the program made a provider call at declaration time: {args.token}")


def _ensure_event_loop() -> None:
    """Pulumi's mocks run on the thread's current event loop; a test before this one may have
    closed it or left none (``asyncio.run`` does), so the order of tests must not matter."""
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
        if not loop.is_closed():
            return
    except RuntimeError:
        pass
    asyncio.set_event_loop(asyncio.new_event_loop())


def run_stack(
    stack_name: str, overrides: dict[str, Any] | None = None, expect_error: bool = False
) -> StackRun:
    """Run ``infra/`` as the Pulumi CLI would for ``stack_name``; return what it declared.

    With ``expect_error`` the program must raise: the error and whatever was declared before
    it come back in the StackRun instead of propagating.
    """
    _ensure_event_loop()
    recorder = _Recorder()
    pulumi_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(
        recorder, project=PROJECT, stack=stack_name, preview=False, monitor=_Monitor(recorder)
    )
    pulumi.runtime.set_all_config(stack_config(stack_name, overrides))
    outputs: dict[str, Any] = {}

    def program() -> None:
        runpy.run_path(str(ROOT / "infra"), run_name="__main__")
        root = pulumi_settings.get_root_resource()
        exported = dict(getattr(root, "outputs", {}))
        resolved: dict[str, Any] | None = _sync_await(pulumi.Output.from_input(exported).future())
        outputs.update(resolved or {})

    try:
        _sync_await(run_pulumi_func(program))
    except Exception as exc:
        if not expect_error:
            raise
        return StackRun(resources=recorder.resources, error=exc)
    assert not expect_error, f"{stack_name} with {overrides} declared its stack without an error"
    return StackRun(resources=recorder.resources, outputs=outputs)

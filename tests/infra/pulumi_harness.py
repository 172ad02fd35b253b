"""Run the real Pulumi program (``infra/``) under mocks, per committed stack file.

``run_stack("sagemaker-dev")`` does what the Pulumi CLI does before it starts the program:
take each key's default from ``Pulumi.yaml``, apply ``Pulumi.<stack>.yaml`` over it (plus any
overrides), then runs ``runpy.run_path("infra", run_name="__main__")`` with
``pulumi.runtime.set_mocks`` and returns every declared resource and the stack outputs.
"""

from __future__ import annotations

import json
import runpy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "triton-deploy-kit"


@dataclass(frozen=True)
class Declared:
    """One resource the program declared: its type token, name and resolved inputs."""

    type: str
    name: str
    inputs: dict[str, Any]


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


def _as_config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def stack_config(stack_name: str, overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """Pulumi.yaml defaults, then the stack file, then ``overrides`` (keys may be unqualified)."""

    def qualify(key: str) -> str:
        return key if ":" in key else f"{PROJECT}:{key}"

    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    config: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        if isinstance(decl, dict) and ("default" in decl or "value" in decl):
            config[qualify(key)] = _as_config_string(decl.get("default", decl.get("value")))
        elif not isinstance(decl, dict):
            config[qualify(key)] = _as_config_string(decl)
    stack = yaml.safe_load((ROOT / f"Pulumi.{stack_name}.yaml").read_text())
    for key, value in ((stack or {}).get("config") or {}).items():
        config[qualify(key)] = _as_config_string(value)
    for key, value in (overrides or {}).items():
        config[qualify(key)] = _as_config_string(value)
    return config


class _Recorder(pulumi.runtime.Mocks):
    """Records every resource; echoes inputs back with an id, an ARN and a name."""

    def __init__(self) -> None:
        self.resources: list[Declared] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append(Declared(args.typ, args.name, dict(args.inputs)))
        state = dict(args.inputs)
        state.setdefault("name", args.name)
        state.setdefault("arn", f"arn:aws:mock:::{args.typ.split(':')[-1].lower()}/{args.name}")
        if args.typ == "aws:s3/bucket:Bucket":
            state.setdefault("bucket", f"{args.name}-0123456")
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        raise AssertionError(f"the program made a provider call at declaration time: {args.token}")


def run_stack(
    stack_name: str, overrides: dict[str, Any] | None = None, expect_error: bool = False
) -> StackRun:
    """Run ``infra/`` as the Pulumi CLI would for ``stack_name``; return what it declared.

    With ``expect_error`` the program must raise: the error and whatever was declared before
    it come back in the StackRun instead of propagating.
    """
    recorder = _Recorder()
    pulumi_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(recorder, project=PROJECT, stack=stack_name, preview=False)
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

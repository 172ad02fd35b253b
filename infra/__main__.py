"""The one Pulumi program for every stack: read config once, dispatch on the target.

Run by the Pulumi CLI (``main: infra/`` in Pulumi.yaml) or, in tests, by
``runpy.run_path("infra", run_name="__main__")`` under ``pulumi.runtime.set_mocks``.
"""

from __future__ import annotations

import pulumi

from infra.config import ConfigReader, ConfigSource, deprecated_keys
from infra.stack_keys import PROJECT_DIR, undeclared
from infra.targets import stacks
from infra.targets.engine_driver import DRIVER_NOT_NATIVE
from infra.targets.feasibility import require_feasible


def pulumi_source() -> ConfigSource:
    """A ConfigSource over the running Pulumi program's config (any namespace)."""

    def get(qualified: str) -> str | None:
        namespace, _, name = qualified.partition(":")
        return pulumi.Config(namespace).get(name)

    return get


def configured_keys() -> list[str]:
    """Every config key the engine handed the program (qualified)."""
    from pulumi.runtime.config import CONFIG, get_config_env

    return [*CONFIG.get(), *get_config_env()]


def main() -> None:
    """Validate every key and the stack's feasibility first (the one path ``tdk validate``
    takes), then declare the chosen target's resources and outputs."""
    stack = stacks.settings(ConfigReader(pulumi_source()), pulumi.get_stack())
    for warning in [
        *undeclared(PROJECT_DIR, configured_keys()),
        *deprecated_keys(pulumi_source()),
    ]:
        pulumi.log.warn(warning)
    for found in require_feasible(stack).findings:
        if found.code == DRIVER_NOT_NATIVE:  # what validate and doctor say of the node driver
            pulumi.log.warn(f"{found.code} {found.message}")
    for name, value in stack.program.declare(stack.config).items():
        pulumi.export(name, value)


if __name__ == "__main__":
    main()

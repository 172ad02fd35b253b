"""The cloud names the sagemaker target derives from the stack's ``name`` (checked by
``infra.values.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.clouds.aws.names import (
    APP_SCALING_POLICY,
    BUDGET,
    CW_NAME,
    IAM_ROLE,
    LOG_GROUP,
    SAGEMAKER,
    SNS_TOPIC,
)
from infra.targets.sagemaker.entry import ENTRY
from infra.values.names import DerivedName, derived

TARGET = ENTRY.name

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(TARGET, SAGEMAKER, False, "{name}"),  # the endpoint
    *derived(TARGET, SAGEMAKER, True, "{name}"),  # model, endpoint config
    *derived(TARGET, IAM_ROLE, True, "{name}"),
    *derived(
        TARGET,
        CW_NAME,
        False,
        "{name}",
        "{name}-5xx-rate",
        "{name}-p99-latency",
        "{name}-disk",
        "{name}-cache-hit-rate",
        "{name}-gpu-memory",
    ),
    *derived(TARGET, SNS_TOPIC, True, "{name}-alarms"),
    *derived(TARGET, APP_SCALING_POLICY, True, "{name}-invocations", "{name}-gpu"),
    *derived(TARGET, LOG_GROUP, False, "/aws/sagemaker/Endpoints/{name}"),
    *derived(TARGET, BUDGET, False, "{name}-monthly"),
)
# fmt: on

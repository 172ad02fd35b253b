"""The cloud names the sagemaker-ic target derives from the stack's ``name`` (checked by
``infra.targets.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.targets.names import (
    BUDGET,
    IAM_ROLE,
    LOG_GROUP,
    SAGEMAKER,
    SNS_TOPIC,
    DerivedName,
    derived,
)

TARGET = "sagemaker-ic"

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(TARGET, SAGEMAKER, True, "{name}"),  # endpoint, endpoint config
    *derived(TARGET, IAM_ROLE, True, "{name}"),
    *derived(TARGET, SNS_TOPIC, True, "{name}-alarms"),
    *derived(TARGET, LOG_GROUP, False, "/aws/sagemaker/Endpoints/{name}"),
    *derived(TARGET, BUDGET, False, "{name}-monthly"),
)
# fmt: on

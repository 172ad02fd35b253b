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
from infra.values.names import DerivedName, derived

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(SAGEMAKER, False, "{name}"),  # the endpoint
    *derived(SAGEMAKER, True, "{name}"),  # model, endpoint config
    *derived(IAM_ROLE, True, "{name}"),
    *derived(CW_NAME,
        False,
        "{name}",
        "{name}-5xx-rate",
        "{name}-p99-latency",
        "{name}-disk",
        "{name}-cache-hit-rate",
        "{name}-gpu-memory",
    ),
    *derived(SNS_TOPIC, True, "{name}-alarms"),
    *derived(APP_SCALING_POLICY, True, "{name}-invocations", "{name}-gpu"),
    *derived(LOG_GROUP, False, "/aws/sagemaker/Endpoints/{name}"),
    *derived(BUDGET, False, "{name}-monthly"),
)
# fmt: on

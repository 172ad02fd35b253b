"""The cloud names the sagemaker-ic target derives from the stack's ``name`` (checked by
``infra.values.names.check_name`` while the config is read)."""

from __future__ import annotations

from infra.clouds.aws.names import (
    APP_SCALING_POLICY,
    BUDGET,
    CW_NAME,
    IAM_ROLE,
    LOG_GROUP,
    LONGEST_COMPONENT,
    SAGEMAKER,
    SNS_TOPIC,
)
from infra.values.names import DerivedName, derived

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(SAGEMAKER, False, "{name}"),  # endpoint
    *derived(SAGEMAKER, True, "{name}"),  # endpoint config
    *derived(IAM_ROLE, True, "{name}"),
    *derived(SNS_TOPIC, True, "{name}-alarms"),
    *derived(LOG_GROUP, False, "/aws/sagemaker/Endpoints/{name}"),
    *derived(BUDGET, False, "{name}-monthly"),
    *derived(CW_NAME, False, "{name}"),  # dashboard
    # alarms per inference component (monitoring.alarm_specs, scaling)
    *derived(CW_NAME, False, "{name}-{component}-no-capacity",
             "{name}-{component}-5xx-rate",
             "{name}-{component}-p99-latency", component=LONGEST_COMPONENT),
    # per component, auto-named from ``cut_name`` (stack.resource_name): fit by construction
    *derived(SAGEMAKER, True, "{base}", component=LONGEST_COMPONENT),  # model
    *derived(APP_SCALING_POLICY, True, "{base}-concurrency", "{base}-wake",
             component=LONGEST_COMPONENT),
)
# fmt: on

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
from infra.targets.sagemaker_ic.names import TARGET_NAME
from infra.values.names import DerivedName, derived

TARGET = TARGET_NAME

# fmt: off
DERIVED: tuple[DerivedName, ...] = (
    *derived(TARGET, SAGEMAKER, False, "{name}"),  # endpoint
    *derived(TARGET, SAGEMAKER, True, "{name}"),  # endpoint config
    *derived(TARGET, IAM_ROLE, True, "{name}"),
    *derived(TARGET, SNS_TOPIC, True, "{name}-alarms"),
    *derived(TARGET, LOG_GROUP, False, "/aws/sagemaker/Endpoints/{name}"),
    *derived(TARGET, BUDGET, False, "{name}-monthly"),
    *derived(TARGET, CW_NAME, False, "{name}"),  # dashboard
    # alarms per inference component (monitoring.alarm_specs, scaling)
    *derived(TARGET, CW_NAME, False, "{name}-{component}-no-capacity",
             "{name}-{component}-5xx-rate",
             "{name}-{component}-p99-latency", component=LONGEST_COMPONENT),
    # per component, auto-named from ``cut_name`` (stack.resource_name): fit by construction
    *derived(TARGET, SAGEMAKER, True, "{base}", component=LONGEST_COMPONENT),  # model
    *derived(TARGET, APP_SCALING_POLICY, True, "{base}-concurrency", "{base}-wake",
             component=LONGEST_COMPONENT),
)
# fmt: on

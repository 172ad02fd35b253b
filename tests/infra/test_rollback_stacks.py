"""Rolling back is one step per cloud target (issue 40, row 5): point the stack at the previous
release and update. Under Pulumi mocks, the real program per committed stack file: release r1,
then r2, then back to r1 declares exactly what r1 declared, and across the releases the alarms,
the scaling and the endpoint or workload they watch do not move (they follow the release)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.infra.pulumi_harness import StackRun

#: what changes with the release, per stack: the resources that read it
RELEASE_READERS = {
    "aws:sagemaker/model:Model",
    "aws:sagemaker/endpointConfiguration:EndpointConfiguration",
    "aws:iam/rolePolicy:RolePolicy",
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:serviceaccount/account:Account",  # the release reader's display name says which
    "kubernetes:apps/v1:Deployment",
}
#: what must follow the endpoint through a release change, unchanged
FOLLOWERS = (
    "aws:cloudwatch/metricAlarm:MetricAlarm",
    "aws:appautoscaling/target:Target",
    "aws:appautoscaling/policy:Policy",
    "kubernetes:keda.sh/v1alpha1:ScaledObject",
    "kubernetes:core/v1:Service",
    "gcp:monitoring/alertPolicy:AlertPolicy",
)
#: stack -> (the stack key naming the release, r1, r2)
RELEASES = {
    "sagemaker-dev": ("sagemakerReleasePrefix", "releases/r1", "releases/r2"),
    "gke-dev": ("releaseUrl", "gs://my-tdk-releases/releases/v1", "gs://my-tdk-releases/releases/v2"),
}  # fmt: skip


def _declared(run: StackRun) -> dict[tuple[str, str], str]:
    return {
        (r.type, r.name): json.dumps(r.inputs, sort_keys=True, default=str) for r in run.resources
    }


@pytest.mark.parametrize("stack", sorted(RELEASES))
def test_rolling_back_returns_the_stack_to_the_previous_release(
    stack: str, stack_runner: Callable[..., Any]
) -> None:
    key, first, second = RELEASES[stack]
    before = stack_runner(stack, {key: first})
    rolled_out = stack_runner(stack, {key: second})
    rolled_back = stack_runner(stack, {key: first})
    assert _declared(rolled_back) == _declared(before)
    assert rolled_back.outputs == before.outputs
    changed = {
        kind
        for (kind, name), inputs in _declared(rolled_out).items()
        if _declared(before).get((kind, name)) != inputs
    }
    assert changed and changed <= RELEASE_READERS, changed
    followers = [k for k in _declared(before) if k[0] in FOLLOWERS]
    assert followers, "no alarm or scaling resource found"
    assert all(_declared(rolled_out)[k] == _declared(before)[k] for k in followers)
    assert second.rsplit("/", 1)[-1] in json.dumps(rolled_out.outputs, default=str)

"""Every derived cloud name fits its cloud's limit and pattern with the longest accepted
``name``; a longer one is refused up front; the table covers every name the stacks derive."""

from __future__ import annotations

import pytest

from infra.targets import names
from infra.targets.names import derived_names, max_name_length
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import Declared, run_stack

STACKS = {"sagemaker": "sagemaker-dev", "eks": "eks-dev", "gke": "gke-dev"}
NAME_LIMIT = 40  # what infra.config accepts for every target

#: resource types with a length-limited physical name: auto-named by Pulumi from the logical
#: name unless the stack names them explicitly
AUTONAMED: dict[str, names.NameRule] = {
    "aws:iam/role:Role": names.IAM_ROLE,
    "aws:sagemaker/model:Model": names.SAGEMAKER,
    "aws:sagemaker/endpointConfiguration:EndpointConfiguration": names.SAGEMAKER,
    "aws:sns/topic:Topic": names.SNS_TOPIC,
    "aws:appautoscaling/policy:Policy": names.APP_SCALING_POLICY,
    "aws:eks/nodeGroup:NodeGroup": names.EKS_NODEGROUP,
    "gcp:container/nodePool:NodePool": names.GKE_NODE_POOL,
    "gcp:compute/network:Network": names.GCE,
    "gcp:compute/subnetwork:Subnetwork": names.GCE,
    "gcp:compute/router:Router": names.GCE,
    "gcp:compute/routerNat:RouterNat": names.GCE,
    # always named explicitly by the stack
    "aws:sagemaker/endpoint:Endpoint": names.SAGEMAKER,
    "aws:eks/cluster:Cluster": names.EKS_CLUSTER,
    "aws:amp/workspace:Workspace": names.AMP_ALIAS,
    "aws:cloudwatch/dashboard:Dashboard": names.CW_NAME,
    "aws:cloudwatch/metricAlarm:MetricAlarm": names.CW_NAME,
    "aws:cloudwatch/logGroup:LogGroup": names.LOG_GROUP,
    "aws:budgets/budget:Budget": names.BUDGET,
    "gcp:container/cluster:Cluster": names.GKE_CLUSTER,
    "gcp:serviceaccount/account:Account": names.GCP_SERVICE_ACCOUNT,
}
#: input that holds an explicit physical name, per resource type
EXPLICIT = ("name", "accountId", "alias", "dashboardName", "logGroupName", "budgetName")


def longest(target: str) -> str:
    """The longest accepted name: starts with a letter, as every target allows."""
    length = min(NAME_LIMIT, max_name_length(target))
    return "t" + "x" * (length - 1)


@pytest.mark.parametrize("target", list(STACKS))
def test_every_derived_name_fits_with_the_longest_accepted_name(target: str) -> None:
    name = longest(target)
    names.check_name(target, name)
    for derived in derived_names(target):
        value = derived.render(name)
        assert derived.rule.accepts(value), f"{derived.template} -> {value}"


@pytest.mark.parametrize("target", ["eks", "gke"])
def test_a_name_one_character_too_long_is_refused_before_any_resource(target: str) -> None:
    name = longest(target) + "y"
    run = run_stack(STACKS[target], overrides={"name": name}, expect_error=True)
    assert isinstance(run.error, ConfigError)
    assert "triton-deploy-kit:name" in run.error.message
    assert f"at most {max_name_length(target)} characters" in run.error.hint
    assert not run.resources


def test_gcp_service_account_ids_are_never_truncated_into_collisions() -> None:
    """Two names sharing their first 23 characters used to get the same account id."""
    with pytest.raises(ConfigError, match="GCP service account id"):
        names.check_name("gke", "team-alpha-inference-prod")


def test_gke_refuses_a_name_starting_with_a_digit() -> None:
    with pytest.raises(ConfigError, match="GKE cluster name"):
        names.check_name("gke", "1tdk")


def _template(value: str, name: str) -> str:
    return value.replace(name, "{name}")


def _explicit(resource: Declared) -> str | None:
    for key in EXPLICIT:
        value = resource.inputs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _table(target: str) -> dict[str, set[tuple[str, bool]]]:
    table: dict[str, set[tuple[str, bool]]] = {}
    for d in derived_names(target):
        assert d.target == target
        table.setdefault(d.rule.kind, set()).add((d.template, d.autonamed))
    return table


@pytest.mark.parametrize("target", list(STACKS))
def test_the_table_lists_every_name_the_stack_derives(target: str) -> None:
    name = longest(target)
    run = run_stack(STACKS[target], overrides={"name": name})
    table = _table(target)
    for resource in run.resources:
        rule = AUTONAMED.get(resource.type)
        if rule is None:
            continue
        explicit = _explicit(resource)
        if explicit:
            entry, value = (_template(explicit, name), False), explicit
        else:
            entry, value = (_template(resource.name, name), True), resource.name + "-abc1234"
        assert entry in table.get(rule.kind, set()), f"{resource.type} {entry} not in the table"
        assert rule.accepts(value), f"{resource.type} {value!r} breaks {rule.kind}"
    for release in run.of_type("kubernetes:helm.sh/v3:Release"):
        assert names.HELM_RELEASE.accepts(release.inputs["name"]), release.name

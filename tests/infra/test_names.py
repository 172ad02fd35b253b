"""Every derived cloud name fits its cloud's limit and pattern with the longest accepted
``name``; a longer one is refused up front; the table covers every name the stacks derive."""

from __future__ import annotations

import re

import pytest

from infra.clouds.aws import names as aws_names
from infra.clouds.gcp import names as gcp_names
from infra.targets import registry, stacks
from infra.values import names
from infra.values.names import DerivedName
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import ROOT, Declared, run_stack


def _committed_stacks() -> dict[str, str]:
    """target -> its committed stack, read from the stack files through the registry."""
    found: dict[str, str] = {}
    for path in sorted(ROOT.glob("Pulumi.*.yaml")):
        stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        found.setdefault(stacks.load_stack(ROOT, stack).entry.name, stack)
    return found


STACKS = _committed_stacks()
#: every registered target that deploys and derives cloud names from ``name``
NAMED = [t for t in registry.able("deploy") if registry.get(t).deploy().derived_names]
NAME_LIMIT = 40  # what infra.config accepts for every target


def derived_names(target: str) -> tuple[DerivedName, ...]:
    return registry.get(target).deploy().derived_names


def max_name_length(target: str) -> int:
    return names.max_name_length(derived_names(target))


def test_every_deployable_target_has_a_committed_stack() -> None:
    assert set(registry.able("deploy")) <= set(STACKS), "commit a Pulumi.<target>-dev.yaml"
    assert "sagemaker-ic" in NAMED  # the list used to be hand-written and left it out


#: resource types with a length-limited physical name: auto-named by Pulumi from the logical
#: name unless the stack names them explicitly
AUTONAMED: dict[str, names.NameRule] = {
    "aws:iam/role:Role": aws_names.IAM_ROLE,
    "aws:sagemaker/model:Model": aws_names.SAGEMAKER,
    "aws:sagemaker/endpointConfiguration:EndpointConfiguration": aws_names.SAGEMAKER,
    "aws:sns/topic:Topic": aws_names.SNS_TOPIC,
    "aws:appautoscaling/policy:Policy": aws_names.APP_SCALING_POLICY,
    "aws:eks/nodeGroup:NodeGroup": aws_names.EKS_NODEGROUP,
    "gcp:container/nodePool:NodePool": gcp_names.GKE_NODE_POOL,
    "gcp:compute/network:Network": gcp_names.GCE,
    "gcp:compute/subnetwork:Subnetwork": gcp_names.GCE,
    "gcp:compute/router:Router": gcp_names.GCE,
    "gcp:compute/routerNat:RouterNat": gcp_names.GCE,
    # always named explicitly by the stack
    "aws:sagemaker/endpoint:Endpoint": aws_names.SAGEMAKER,
    "aws:eks/cluster:Cluster": aws_names.EKS_CLUSTER,
    "aws:amp/workspace:Workspace": aws_names.AMP_ALIAS,
    "aws:cloudwatch/dashboard:Dashboard": aws_names.CW_NAME,
    "aws:cloudwatch/metricAlarm:MetricAlarm": aws_names.CW_NAME,
    "aws:cloudwatch/logGroup:LogGroup": aws_names.LOG_GROUP,
    "aws:budgets/budget:Budget": aws_names.BUDGET,
    "gcp:container/cluster:Cluster": gcp_names.GKE_CLUSTER,
    "gcp:serviceaccount/account:Account": gcp_names.GCP_SERVICE_ACCOUNT,
}
#: input that holds an explicit physical name, per resource type
EXPLICIT = ("name", "accountId", "alias", "dashboardName", "logGroupName", "budgetName")


def longest(target: str) -> str:
    """The longest accepted name: starts with a letter, as every target allows."""
    length = min(NAME_LIMIT, max_name_length(target))
    return "t" + "x" * (length - 1)


@pytest.mark.parametrize("target", NAMED)
def test_every_derived_name_fits_with_the_longest_accepted_name(target: str) -> None:
    name = longest(target)
    names.check_name(target, name, derived_names(target))
    for derived in derived_names(target):
        value = derived.render(name)
        assert derived.rule.accepts(value), f"{derived.template} -> {value}"


@pytest.mark.parametrize("target", NAMED)
def test_a_name_one_character_too_long_is_refused_before_any_resource(target: str) -> None:
    name = longest(target) + "y"
    run = run_stack(STACKS[target], overrides={"name": name}, expect_error=True)
    assert isinstance(run.error, ConfigError)
    assert "triton-deploy-kit:name" in run.error.message
    if max_name_length(target) < NAME_LIMIT:  # the derived names are the tighter limit
        assert f"at most {max_name_length(target)} characters" in run.error.hint
    else:
        assert f"1-{NAME_LIMIT}" in run.error.message
    assert not run.resources


def test_gcp_service_account_ids_are_never_truncated_into_collisions() -> None:
    """Two names sharing their first 23 characters used to get the same account id."""
    with pytest.raises(ConfigError, match="GCP service account id"):
        names.check_name("gke", "team-alpha-inference-prod", derived_names("gke"))


def test_gke_refuses_a_name_starting_with_a_digit() -> None:
    with pytest.raises(ConfigError, match="GKE cluster name"):
        names.check_name("gke", "1tdk", derived_names("gke"))


def _matches(template: str, value: str, name: str) -> bool:
    """Whether ``value`` is ``template`` with ``name`` (and any valid component name)."""
    template = template.replace("{base}", "{name}-{base}")  # cut_name keeps the name whole
    pattern = re.escape(template).replace(re.escape("{name}"), re.escape(name))
    for field in ("{component}", "{base}"):
        pattern = pattern.replace(re.escape(field), "[A-Za-z0-9-]+")
    return re.fullmatch(pattern, value) is not None


def _explicit(resource: Declared) -> str | None:
    for key in EXPLICIT:
        value = resource.inputs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _table(target: str) -> dict[str, set[tuple[str, bool]]]:
    table: dict[str, set[tuple[str, bool]]] = {}
    for d in derived_names(target):
        table.setdefault(d.rule.kind, set()).add((d.template, d.autonamed))
    return table


@pytest.mark.parametrize("target", NAMED)
def test_the_table_lists_every_name_the_stack_derives(target: str) -> None:
    name = longest(target)
    run = run_stack(STACKS[target], overrides={"name": name})
    table = _table(target)
    for resource in run.resources:
        rule = AUTONAMED.get(resource.type)
        if rule is None:
            continue
        explicit = _explicit(resource)
        physical, autonamed = (explicit, False) if explicit else (resource.name, True)
        listed = [t for t, auto in table.get(rule.kind, set()) if auto == autonamed]
        assert any(_matches(t, physical, name) for t in listed), (
            f"{resource.type} {physical!r} is not in the table of {target}"
        )
        value = physical if explicit else physical + "-abc1234"
        assert rule.accepts(value), f"{resource.type} {value!r} breaks {rule.kind}"
    for release in run.of_type("kubernetes:helm.sh/v3:Release"):
        assert names.HELM_RELEASE.accepts(release.inputs["name"]), release.name


def test_a_name_per_component_needs_the_longest_component_name() -> None:
    """The longest component name is the cloud's (AWS's InferenceComponentName), given by the
    target that derives per-component names: shared code no longer knows it."""
    rule = aws_names.CW_NAME
    with pytest.raises(TypeError, match="longest name"):
        names.derived(rule, False, "{name}-{component}-5xx")
    (found,) = names.derived(rule, False, "{name}-{component}", component="c" * 5)
    assert found.render("n") == "n-ccccc"

"""What a platform engineer expects of every stack: a cost budget, log retention, an S3 gateway
endpoint, and a cluster API that is not open to the internet unless asked for."""

from __future__ import annotations

from typing import Any

import pytest

from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack
from tests.registry_lists import cloud_targets, deployable_targets, dev_stack

#: the committed stacks of every target on AWS (the registry's)
AWS_STACKS = [dev_stack(t) for t in cloud_targets("aws")]


@pytest.fixture(scope="module")
def eks() -> StackRun:
    return run_stack("eks-dev")


@pytest.fixture(scope="module")
def sagemaker() -> StackRun:
    return run_stack("sagemaker-dev")


def _error(stack: str, overrides: dict[str, Any]) -> ConfigError:
    run = run_stack(stack, overrides=overrides, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert not run.resources, "declared resources before refusing the config"
    return run.error


def test_eks_model_downloads_skip_the_nat_through_an_s3_gateway_endpoint(eks: StackRun) -> None:
    endpoint = eks.one("aws:ec2/vpcEndpoint:VpcEndpoint")
    assert endpoint.inputs["serviceName"] == "com.amazonaws.us-east-1.s3"
    assert endpoint.inputs["vpcEndpointType"] == "Gateway"
    tables = {r.name: r.options.urn for r in eks.of_type("aws:ec2/routeTable:RouteTable")}
    assert set(tables.values()) <= set(endpoint.options.dependencies)


@pytest.mark.parametrize(("stack", "key"), [("eks-dev", "eksPublicAccessCidrs"),
                                            ("gke-dev", "gkeAuthorizedNetworks")])  # fmt: skip
def test_an_api_open_to_the_internet_needs_an_explicit_opt_in(stack: str, key: str) -> None:
    error = _error(stack, {key: ""})
    assert "0.0.0.0/0" in error.message and "k8sApiOpenToInternet" in error.hint
    opened = run_stack(stack, overrides={key: "", "k8sApiOpenToInternet": True})
    assert opened.resources


def test_eks_api_is_reachable_only_from_the_configured_cidrs(eks: StackRun) -> None:
    vpc = eks.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_gke_api_is_reachable_only_from_the_configured_cidrs() -> None:
    cluster = run_stack("gke-dev").one("gcp:container/cluster:Cluster").inputs
    blocks = cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"]
    assert [b["cidrBlock"] for b in blocks] == ["203.0.113.0/24"]


def test_eks_log_groups_exist_with_retention_before_eks_writes_them(eks: StackRun) -> None:
    groups = {r.inputs["name"]: r for r in eks.of_type("aws:cloudwatch/logGroup:LogGroup")}
    assert set(groups) == {
        "/aws/eks/tdk-eks-dev/cluster",
        *(f"/aws/containerinsights/tdk-eks-dev/{k}"
          for k in ("performance", "application", "dataplane", "host")),
    }  # fmt: skip
    assert {g.inputs["retentionInDays"] for g in groups.values()} == {30}
    cluster = eks.one("aws:eks/cluster:Cluster")
    assert groups["/aws/eks/tdk-eks-dev/cluster"].options.urn in cluster.options.dependencies
    addon = eks.one("aws:eks/addon:Addon")
    insights = {g.options.urn for n, g in groups.items() if "containerinsights" in n}
    assert insights <= set(addon.options.dependencies)


def test_sagemaker_endpoint_logs_have_retention_before_the_endpoint(sagemaker: StackRun) -> None:
    group = sagemaker.one("aws:cloudwatch/logGroup:LogGroup")
    assert group.inputs["name"] == "/aws/sagemaker/Endpoints/tdk-sagemaker-dev"
    assert group.inputs["retentionInDays"] == 30
    endpoint = sagemaker.one("aws:sagemaker/endpoint:Endpoint")
    assert group.options.urn in endpoint.options.dependencies


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_log_retention_must_be_a_value_cloudwatch_accepts(stack: str) -> None:
    error = _error(stack, {"awsLogRetentionDays": 10})
    assert "awsLogRetentionDays" in error.message and "14" in error.message


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_aws_stacks_carry_a_monthly_budget_that_mails_its_alerts(stack: str) -> None:
    budget = run_stack(stack).one("aws:budgets/budget:Budget").inputs
    assert budget["budgetType"] == "COST" and budget["timeUnit"] == "MONTHLY"
    assert budget["limitAmount"] == "1000" and budget["limitUnit"] == "USD"
    kinds = sorted((n["notificationType"], n["threshold"]) for n in budget["notifications"])
    assert kinds == [("ACTUAL", 80.0), ("ACTUAL", 100.0), ("FORECASTED", 100.0)]
    assert all(n["subscriberEmailAddresses"] == ["ops@example.com"]
               for n in budget["notifications"])  # fmt: skip


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_an_aws_budget_without_a_recipient_is_refused(stack: str) -> None:
    error = _error(stack, {"alertEmail": ""})
    assert "alertEmail" in error.message and "budgetMonthlyUsd 0" in error.hint


def _budgets(run: StackRun) -> list[str]:
    """The cloud budgets a stack declares (every provider names its type ``...Budget``)."""
    return [r.type for r in run.resources if r.type.rpartition(":")[2] == "Budget"]


@pytest.mark.parametrize("stack", [dev_stack(t) for t in deployable_targets()])
def test_the_budget_can_be_opted_out_of_explicitly(stack: str) -> None:
    run = run_stack(stack, overrides={"budgetMonthlyUsd": 0, "alertEmail": ""})
    assert not _budgets(run)


def test_gke_budget_needs_the_billing_account_and_enables_its_api() -> None:
    assert not run_stack("gke-dev").of_type("gcp:billing/budget:Budget")
    run = run_stack("gke-dev", overrides={"gkeBillingAccount": "012345-6789AB-CDEF01"})
    budget = run.one("gcp:billing/budget:Budget").inputs
    assert budget["billingAccount"] == "012345-6789AB-CDEF01"
    assert budget["amount"]["specifiedAmount"] == {"currencyCode": "USD", "units": "1000"}
    assert budget["budgetFilter"]["projects"] == ["projects/123456789012"]
    services = {s.inputs["service"] for s in run.of_type("gcp:projects/service:Service")}
    assert "billingbudgets.googleapis.com" in services


def test_gke_refuses_a_malformed_billing_account() -> None:
    error = _error("gke-dev", {"gkeBillingAccount": "my-billing"})
    assert "gkeBillingAccount" in error.message

"""The committed stacks under mocks against a calendar (issue 17's "Done when").

Sources of the expectations: EKS https://docs.aws.amazon.com/eks/latest/userguide/
kubernetes-versions.html; KEDA https://keda.sh/docs/latest/operate/cluster/
#kubernetes-compatibility; cluster-autoscaler README; Triton release notes (compute capability
7.5 from 25.01); https://aws.amazon.com/sagemaker/pricing/ (all checked 2026-11-24).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws import versions as eks
from infra.clouds.aws.sagemaker import images
from infra.facts import hardware as facts
from infra.facts import kubernetes as kf
from infra.facts import triton as tf
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack
from tests.registry_lists import dev_stack, kubernetes_targets

ROOT = Path(__file__).resolve().parents[2]
ENDPOINT_CONFIG = "aws:sagemaker/endpointConfiguration:EndpointConfiguration"


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-24")


def _charts(run: StackRun) -> dict[str, dict[str, Any]]:
    return {r.inputs["chart"]: r.inputs for r in run.of_type("kubernetes:helm.sh/v3:Release")}


@pytest.mark.parametrize("today", ["2026-11-24", "2027-01-10", "2025-12-01"])
def test_eks_default_stays_in_standard_support_60_days(
    monkeypatch: pytest.MonkeyPatch, today: str
) -> None:
    monkeypatch.setenv("TDK_TODAY", today)
    run = run_stack("eks-dev")
    cluster = run.one("aws:eks/cluster:Cluster").inputs
    row = eks.EKS_BY_VERSION[cluster["version"]]
    assert row.standard_end - dt.date.fromisoformat(today) >= dt.timedelta(days=60)
    assert cluster["upgradePolicy"]["supportType"] == "STANDARD"
    minor = kf.minor(cluster["version"])
    charts = _charts(run)
    assert kf.keda_pin(charts["keda"]["version"]).supports(minor)  # type: ignore[union-attr]
    assert kf.minor(charts["cluster-autoscaler"]["values"]["image"]["tag"]) == minor


def test_extended_support_version_refused_without_opt_in_with_its_cost() -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("eks-dev", overrides={"eksKubernetesVersion": "1.34", "eksSupportType": ""})
    assert "valid choices: STANDARD" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        run_stack("eks-dev", overrides={"eksKubernetesVersion": "1.32"})
    assert "extended support" in str(caught.value) and "$365" in str(caught.value)
    assert "eksSupportType EXTENDED" in caught.value.hint


@pytest.mark.parametrize("stack", ["sagemaker-dev", "sagemaker-ic-dev"])
def test_sagemaker_default_is_newest_image_with_its_ami_on_every_variant(stack: str) -> None:
    run = run_stack(stack)
    newest = tf.sagemaker_image_versions()[-2:]
    for model in run.of_type("aws:sagemaker/model:Model"):
        tag = model.inputs["primaryContainer"]["image"].rpartition(":")[2]
        assert facts.image_version(tag) in newest
    variants = [v for c in run.of_type(ENDPOINT_CONFIG) for v in c.inputs["productionVariants"]]
    assert variants
    cuda = facts.IMAGES[newest[-1]].cuda[0]
    for variant in variants:
        assert images.AMI_BY_NAME[variant["inferenceAmiVersion"]].cuda[0] == cuda


def test_sagemaker_core_is_read_at_runtime() -> None:
    """The default follows whatever the installed sagemaker-core lists (up to 26.05 today)."""
    versions = tf.sagemaker_image_versions()
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    assert tf.default_sagemaker_triton_version() == versions[-1]


@pytest.mark.parametrize("stack", ["sagemaker-dev", "sagemaker-ic-dev"])
def test_an_ami_that_does_not_match_the_image_cuda_is_refused(stack: str) -> None:
    key = (
        "sagemakerInferenceAmiVersion"
        if stack == "sagemaker-dev"
        else ("sagemakerIcInferenceAmiVersion")
    )
    with pytest.raises(ConfigError, match=r"does not fit Triton 25\.09") as caught:
        run_stack(
            stack,
            overrides={"sagemakerTritonVersion": "25.09", key: "al2-ami-sagemaker-inference-gpu-2"},
        )
    assert "al2023-ami-sagemaker-inference-gpu-4-1" in caught.value.hint
    run = run_stack(stack, overrides={"sagemakerTritonVersion": "25.04"})
    variant = run.one(ENDPOINT_CONFIG).inputs["productionVariants"][0]
    assert variant["inferenceAmiVersion"] == "al2-ami-sagemaker-inference-gpu-3-1"  # CUDA 12


def test_p3_with_a_25x_image_is_refused_and_with_24x_accepted() -> None:
    with pytest.raises(ConfigError, match=r"compute capability 7\.0") as caught:
        run_stack(
            "sagemaker-dev",
            overrides={"sagemakerInstanceType": "ml.p3.2xlarge", "sagemakerTritonVersion": "25.09"},
        )
    assert "7.5" in str(caught.value)
    run = run_stack(
        "sagemaker-dev",
        overrides={"sagemakerInstanceType": "ml.p3.2xlarge", "sagemakerTritonVersion": "24.09"},
    )
    assert run.one(ENDPOINT_CONFIG).inputs["productionVariants"][0]["instanceType"] == (
        "ml.p3.2xlarge"
    )


@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_kubernetes_triton_image_is_at_most_12_months_old(stack: str) -> None:
    run = run_stack(stack)
    (deployment,) = run.of_type("kubernetes:apps/v1:Deployment")
    containers = deployment.inputs["spec"]["template"]["spec"]["containers"]
    image = next(c["image"] for c in containers if "tritonserver" in c["image"])
    assert tf.age_months(image, dt.date(2026, 11, 24)) <= tf.MAX_IMAGE_AGE_MONTHS


def test_no_service_account_display_name_over_100_characters() -> None:
    url = "gs://" + "b" * 60 + "/releases/" + "very-long-release-name-" * 4
    run = run_stack("gke-dev", overrides={"releaseUrl": url})
    names = [r.inputs["displayName"] for r in run.of_type("gcp:serviceaccount/account:Account")]
    assert len(names) >= 3 and max(map(len, names)) <= 100


def test_list_prices_are_right() -> None:
    prices = json.loads((ROOT / "infra/clouds/aws/prices.json").read_text())
    for region in ("us-east-1", "us-west-2"):
        row = prices["sagemaker"][region]["ml.g4dn.2xlarge"]
        assert Decimal(row["usd_per_hour"]) == Decimal("0.94")


def test_instance_facts_fixed() -> None:
    assert facts.IMAGES["25.09"].triton == "2.61.0"
    assert "tensorflow" not in facts.IMAGES["25.04"].gpu_backends
    assert "tensorflow" in facts.IMAGES["24.09"].gpu_backends
    g6 = aws_catalog.EC2_GPU_FAMILIES["g6"].disk_gb
    assert (g6["8xlarge"], g6["16xlarge"]) == (900, 1880)


def test_today_can_be_replaced_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A harness replaying its own calendar may patch ``infra.facts.today``."""
    import infra.facts

    monkeypatch.delenv("TDK_TODAY")
    monkeypatch.setattr(infra.facts, "today", lambda: dt.date(2026, 2, 1))
    run = run_stack("eks-dev")  # 1.35 released 2026-01-27; 1.36 not yet
    assert run.one("aws:eks/cluster:Cluster").inputs["version"] == "1.35"

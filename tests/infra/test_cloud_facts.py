"""Cloud facts from sources, compared with today (issue 17): the committed stacks replayed under
mocks against the calendar (``TDK_TODAY`` moves it), and the tables checked against what the
installed botocore and sagemaker-core ship."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import botocore.session
import pytest

from infra.perf.prices import load_prices
from infra.targets import facts, versions
from infra.targets.sagemaker.instances import image_versions, newest_image_version
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack

HELM = "kubernetes:helm.sh/v3:Release"


def _charts(run: StackRun) -> dict[str, Any]:
    return {r.inputs["chart"]: r.inputs for r in run.of_type(HELM)}


@pytest.mark.parametrize(
    ("today", "expected"),
    [
        ("2026-11-24", "1.36"),
        ("2026-06-15", "1.36"),
        ("2026-03-01", "1.35"),
        ("2025-12-01", "1.34"),
    ],
)
def test_eks_default_is_the_newest_in_standard_support_for_60_more_days(
    today: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_TODAY", today)
    run = run_stack("eks-dev")
    cluster = run.one("aws:eks/cluster:Cluster").inputs
    assert cluster["version"] == expected
    assert cluster["upgradePolicy"] == {"supportType": "STANDARD"}
    minor = versions.eks_version(expected)
    assert minor.standard_end - date.fromisoformat(today) >= timedelta(days=60)
    charts = _charts(run)
    keda = next(r for r in versions.KEDA_RELEASES if r.version == charts["keda"]["version"])
    assert expected in keda.minors
    assert charts["cluster-autoscaler"]["values"]["image"]["tag"].startswith(f"v{expected}.")


def test_the_committed_eks_stack_today_stays_in_standard_support() -> None:
    cluster = run_stack("eks-dev").one("aws:eks/cluster:Cluster").inputs
    version = versions.eks_version(cluster["version"])
    assert version.standard_end - versions.today() >= versions.SUPPORT_MARGIN


def test_a_version_in_extended_support_needs_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-24")
    refused = run_stack("eks-dev", {"eksKubernetesVersion": "1.33"}, expect_error=True)
    assert isinstance(refused.error, ConfigError)
    assert "extended support" in str(refused.error) and "+$365 a month" in str(refused.error)
    assert "eksSupportType EXTENDED" in str(refused.error)
    assert not refused.of_type("aws:eks/cluster:Cluster")
    opted = run_stack("eks-dev", {"eksKubernetesVersion": "1.33", "eksSupportType": "EXTENDED"})
    cluster = opted.one("aws:eks/cluster:Cluster").inputs
    assert cluster["upgradePolicy"] == {"supportType": "EXTENDED"}
    assert _charts(opted)["keda"]["version"] == "2.20.0"  # the newest KEDA that supports 1.33


def test_a_version_past_extended_support_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-27")  # 1.31 cannot be created after 2026-11-26
    refused = run_stack(
        "eks-dev", {"eksKubernetesVersion": "1.31", "eksSupportType": "EXTENDED"}, True
    )
    assert isinstance(refused.error, ConfigError) and "1.31" in str(refused.error)


def test_keda_without_a_release_for_the_minor_is_refused() -> None:
    with pytest.raises(ConfigError, match="no KEDA release"):
        versions.keda_version("1.28")


def test_sagemaker_defaults_to_the_newest_image_with_its_ami_on_every_variant() -> None:
    newest_two = sorted(image_versions(), key=lambda v: tuple(map(int, v.split("."))))[-2:]
    run = run_stack("sagemaker-dev")
    image = run.one("aws:sagemaker/model:Model").inputs["primaryContainer"]["image"]
    assert image.rpartition(":")[2].removesuffix("-py3") in newest_two
    (config,) = run.of_type("aws:sagemaker/endpointConfiguration:EndpointConfiguration")
    for variant in config.inputs["productionVariants"]:
        assert variant["inferenceAmiVersion"] == facts.ami_for(newest_image_version())
    ic = run_stack("sagemaker-ic-dev")
    for declared in ic.of_type("aws:sagemaker/endpointConfiguration:EndpointConfiguration"):
        for variant in declared.inputs["productionVariants"]:
            assert variant["inferenceAmiVersion"] in facts.INFERENCE_AMIS


def test_a_cuda_13_image_on_an_older_driver_ami_is_refused() -> None:
    refused = run_stack(
        "sagemaker-dev",
        {"sagemakerTritonVersion": "25.09", "sagemakerInferenceAmiVersion": "al2-ami-sagemaker-"
         "inference-gpu-3-1"},
        expect_error=True,
    )  # fmt: skip
    assert isinstance(refused.error, ConfigError) and "needs 580 or newer" in str(refused.error)
    older = run_stack("sagemaker-dev", {"sagemakerTritonVersion": "24.09"})
    (config,) = older.of_type("aws:sagemaker/endpointConfiguration:EndpointConfiguration")
    assert config.inputs["productionVariants"][0]["inferenceAmiVersion"].startswith("al2-")


def test_v100_with_a_25_image_is_refused_before_any_resource() -> None:
    refused = run_stack(
        "sagemaker-dev",
        {"sagemakerInstanceType": "ml.p3.2xlarge", "sagemakerTritonVersion": "25.04"},
        expect_error=True,
    )
    assert isinstance(refused.error, ConfigError)
    assert "compute capability 7.5" in str(refused.error) and "V100" in str(refused.error)
    assert not refused.resources


@pytest.mark.parametrize("stack", ["gke-dev", "eks-dev"])
def test_kubernetes_triton_image_is_at_most_12_months_old(stack: str) -> None:
    run = run_stack(stack)
    images = [
        c["image"]
        for d in run.of_type("kubernetes:apps/v1:Deployment")
        for c in d.inputs["spec"]["template"]["spec"]["containers"]
        if "tritonserver" in c["image"]
    ]
    assert images
    for image in images:
        released = facts.image(image).released
        assert (versions.today() - released).days <= 365, image


def test_service_account_display_names_fit_iams_100_bytes() -> None:
    url = "gs://" + "a-very-long-bucket-name-for-releases" + "/releases/" + "x" * 120
    run = run_stack("gke-dev", {"releaseUrl": url})
    names = [r.inputs["displayName"] for r in run.of_type("gcp:serviceaccount/account:Account")]
    assert names and all(len(n.encode()) <= 100 for n in names), names
    assert any(n.endswith("...") for n in names)


def test_list_prices_carry_their_source_and_date() -> None:
    table = load_prices(None)
    for region in ("us-east-1", "us-west-2"):
        price = table.lookup("sagemaker", region, "ml.g4dn.2xlarge")
        assert price.usd_per_hour == Decimal("0.94")  # SageMaker real-time list price
        assert "aws.amazon.com/sagemaker/pricing" in price.source
    assert table.date == "2026-11-24"


def test_the_newest_sagemaker_core_image_is_in_the_facts() -> None:
    """A newer sagemaker-core (a new SageMaker Triton image) fails here until the image's
    Triton version, CUDA, driver and compute capability are recorded with their source."""
    for version in image_versions():
        assert facts.image(version).version == version


def test_ami_table_matches_botocore_enum() -> None:
    shape = (
        botocore.session.get_session()
        .get_service_model("sagemaker")
        .shape_for("ProductionVariantInferenceAmiVersion")
    )
    assert set(facts.INFERENCE_AMIS) == set(shape.enum)


def test_triton_25_09_is_2_61_and_tensorflow_left_in_25_03() -> None:
    assert facts.IMAGES["25.09"].triton == "2.61.0"
    assert "tensorflow" in facts.IMAGES["24.09"].gpu_backends
    assert "tensorflow" not in facts.IMAGES["25.04"].gpu_backends

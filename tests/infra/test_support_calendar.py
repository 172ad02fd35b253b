"""An end-of-support date is the first day out (AWS: on that date no new cluster of the version
can be created). Source: https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
(1.31: standard support ended 2025-11-26, extended support ends 2026-11-26), checked 2026-11-26.
"""

from __future__ import annotations

import datetime as dt

import pytest

from infra.clouds.aws import versions as eks
from infra.clouds.gcp import versions as gke
from infra.facts import kubernetes as kf
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import run_stack

D = dt.date


def test_the_end_dates_are_the_first_day_out() -> None:
    row = eks.EKS_BY_VERSION["1.31"]
    assert (row.standard_end, row.extended_end) == (D(2025, 11, 26), D(2026, 11, 26))
    assert row.phase(D(2025, 11, 25)) == "standard"
    assert row.phase(D(2025, 11, 26)) == "extended"
    assert row.phase(D(2026, 11, 25)) == "extended"
    assert row.phase(D(2026, 11, 26)) == "ended"
    assert "1.31" not in eks.offered_eks_versions(D(2026, 11, 26))
    assert "1.31" in eks.offered_eks_versions(D(2026, 11, 25))


def test_eks_131_extended_on_its_end_date_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row 5 of issue 24: validated, then refused by AWS."""
    monkeypatch.setenv("TDK_TODAY", "2026-11-26")
    overrides = {"eksKubernetesVersion": "1.31", "eksSupportType": "EXTENDED"}
    with pytest.raises(ConfigError, match=r"1\.31") as caught:
        run_stack("eks-dev", overrides=overrides)
    assert "1.32" in str(caught.value)  # the versions EKS still offers are named
    monkeypatch.setenv("TDK_TODAY", "2026-11-25")
    run = run_stack("eks-dev", overrides=overrides)
    assert run.one("aws:eks/cluster:Cluster").inputs["version"] == "1.31"


def test_addons_are_pinned_at_each_minors_newest_patch() -> None:
    """kubernetes/autoscaler#10027 (1.36.1, 2026-07-22); kedacore/keda v2.20.2, v2.18.3."""
    assert kf.autoscaler_for("1.36").image_tag == "v1.36.1"
    assert kf.autoscaler_for("1.35").image_tag == "v1.35.2"
    assert kf.keda_for("1.33").version == "2.20.2"
    assert [r.version for r in kf.KEDA_RELEASES if r.supports(31)] == ["2.18.3", "2.16.1"]


def test_134_leaves_standard_support_on_2026_12_02_and_137_is_not_offered() -> None:
    """The calendar (awsdocs/amazon-eks-user-guide kubernetes-versions.adoc, re-checked
    2026-11-27): 1.34 ends standard support 2026-12-02, extended 2027-12-02. No source read on
    2026-11-27 offers 1.37 on EKS, so the default stays 1.36 and 1.37 has no row."""
    row = eks.EKS_BY_VERSION["1.34"]
    assert (row.standard_end, row.extended_end) == (D(2026, 12, 2), D(2027, 12, 2))
    assert row.phase(D(2026, 12, 1)) == "standard" and row.phase(D(2026, 12, 2)) == "extended"
    assert eks.default_eks_version(D(2026, 11, 27)) == "1.36"
    assert eks.EKS_VERSIONS[-1].version == "1.36" and "1.37" not in eks.EKS_BY_VERSION
    assert gke.GKE_CHANNELS["RAPID"] == (34, 37)  # GKE offers 1.37 on Rapid

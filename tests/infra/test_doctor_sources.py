"""``tdk doctor`` checks the kit's facts against something other than itself: the installed
botocore's enums and the installed sagemaker-core's Triton image list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws import doctor as aws_doctor
from infra.facts import doctor
from infra.facts import triton as tf
from infra.targets.doctor import needs

ROOT = Path(__file__).resolve().parents[2]


def _by_fact(found: list[doctor.Finding]) -> dict[str, doctor.Finding]:
    return {f.fact: f for f in found}


def test_the_installed_sources_agree_with_the_kit_today() -> None:
    found = doctor.cloud_findings(needs().clouds) + doctor.sagemaker_image_findings()
    assert found and all(f.status == "ok" for f in found), [f for f in found if f.status != "ok"]
    images = _by_fact(found)["sagemaker-core Triton images"]
    assert "26.05" in images.value and "stacks deploy 26.05" in images.note


def test_a_botocore_size_the_kit_lacks_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    source, enums = aws_doctor._generated_enums()
    types = [*enums["sagemaker.ProductionVariantInstanceType"], "ml.g6e.96xlarge"]
    amis = [*enums["sagemaker.ProductionVariantInferenceAmiVersion"], "al2023-ami-x-gpu-5-1"]
    changed = {**enums, "sagemaker.ProductionVariantInstanceType": types,
               "sagemaker.ProductionVariantInferenceAmiVersion": amis}  # fmt: skip
    monkeypatch.setattr(aws_doctor, "_generated_enums", lambda: (source, changed))
    found = _by_fact(doctor.cloud_findings(needs().clouds))
    sizes = found["GPU instance sizes"]
    assert sizes.status == "aged" and "ml.g6e.96xlarge" in sizes.note
    assert found["GPU InferenceAmiVersions"].status == "aged"
    drift = found["botocore enum sagemaker.ProductionVariantInstanceType"]
    assert drift.status == "aged" and "infra.clouds.aws.generate" in drift.note


def test_an_image_sagemaker_core_lists_without_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tf.sagemaker_image_versions()
    monkeypatch.setattr(tf, "sagemaker_image_versions", lambda: [*listed, "26.11"])
    (newest,) = doctor.sagemaker_image_findings()
    assert newest.status == "broken" and "26.11" in newest.note  # the stacks would deploy it
    monkeypatch.setattr(tf, "sagemaker_image_versions", lambda: ["22.01", *listed])
    (older,) = doctor.sagemaker_image_findings()
    assert older.status == "aged" and "22.01" in older.note


def test_doctor_lists_the_source_checks_for_every_stack() -> None:
    result = CliRunner().invoke(
        app, ["doctor", "--project-dir", str(ROOT), "--json", "--stack", "sagemaker-ic-dev"],
        env={"TDK_TODAY": "2026-11-26"},
    )  # fmt: skip
    report = json.loads(result.stdout)
    facts = {f["fact"]: f for f in report["stacks"]["sagemaker-ic-dev"]}
    assert facts["sagemaker-core Triton images"]["status"] == "ok"
    assert facts["GPU instance sizes"]["source"].startswith("botocore ")

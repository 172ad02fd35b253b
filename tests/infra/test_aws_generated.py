"""The botocore-derived table is current, and the kit's hand-written AWS facts agree with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra.facts import aws, generate
from infra.facts import triton as tf
from infra.targets import names
from infra.targets.sagemaker.instances import single_gpu_types


def test_generated_table_matches_the_installed_botocore() -> None:
    """Fails on drift (a botocore upgrade changed a limit or an enum)."""
    assert generate.GENERATED.read_text() == generate.render(), (
        f"{generate.GENERATED} is out of date; regenerate it with `python -m infra.facts.generate`"
    )


def test_check_mode_exits_1_on_drift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "aws_generated.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(generate, "GENERATED", stale)
    assert generate.main(["--check"]) == 1
    assert generate.main([]) == 0 and generate.main(["--check"]) == 0
    done = subprocess.run(
        [sys.executable, "-m", "infra.facts.generate", "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout


def test_ami_table_covers_exactly_the_botocore_gpu_amis() -> None:
    gpu = {v for v in aws.enum("sagemaker.ProductionVariantInferenceAmiVersion") if "-gpu-" in v}
    assert set(tf.AMI_BY_NAME) == gpu, "update INFERENCE_AMIS in infra/facts/triton.py"


def test_every_sagemaker_instance_the_kit_offers_is_a_botocore_instance_type() -> None:
    known = set(aws.enum("sagemaker.ProductionVariantInstanceType"))
    assert set(single_gpu_types()) <= known


def test_name_rules_come_from_botocore() -> None:
    limit, pattern = aws.name_bounds("sagemaker.EndpointName")
    assert names.SAGEMAKER.limit == limit == 63 and names.SAGEMAKER.pattern == pattern
    assert names.SAGEMAKER.accepts("a" * 63) and not names.SAGEMAKER.accepts("a" * 64)
    assert not names.SAGEMAKER.accepts("a--") and names.SAGEMAKER.accepts("a--b")

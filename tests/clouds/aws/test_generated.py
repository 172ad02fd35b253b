"""The botocore-derived table is current, and the kit's hand-written AWS facts agree with it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws import generate
from infra.clouds.aws import generated as aws
from infra.clouds.aws import names as aws_names
from infra.clouds.aws.offer import instance_spec
from infra.clouds.aws.sagemaker import images
from infra.clouds.aws.sagemaker.instances import single_gpu_types
from infra.facts import hardware as facts
from infra.targets.sagemaker_ic import sizing
from tdk.errors import ConfigError


def test_generated_table_matches_the_installed_botocore() -> None:
    """Fails on drift of a fact (a botocore upgrade changed a limit or an enum), never on the
    botocore version stamp alone."""
    committed = json.loads(generate.GENERATED.read_text())
    assert generate.differences(committed, generate.build()) == [], (
        f"{generate.GENERATED} is out of date; regenerate it: python -m infra.clouds.aws.generate"
    )


def _check(table: dict[str, Any], path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    path.write_text(generate.render(table))
    monkeypatch.setattr(generate, "GENERATED", path)
    return generate.main(["--check"])


def test_a_newer_botocore_with_the_same_facts_is_not_drift(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """2026-12-07: a fresh install resolved botocore 1.44.18 against a table stamped 1.44.8,
    with every enum and limit the same, and CI went red."""
    table = {**generate.build(), "source": "botocore 1.44.8 data/<service>/*/service-2.json"}
    assert _check(table, tmp_path / "generated.json", monkeypatch) == 0
    assert "the same facts" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda t: t["names"]["sagemaker.EndpointName"].update(max=64),
         "names.sagemaker.EndpointName.max: 64 -> 63"),
        (lambda t: t["enums"]["sagemaker.ProductionVariantInstanceType"].remove("ml.g6e.xlarge"),
         "adds ['ml.g6e.xlarge']"),
        (lambda t: t["gpu_families"]["ec2"].remove("g6e"), "gpu_families.ec2: adds ['g6e']"),
    ],
)  # fmt: skip
def test_a_changed_fact_is_drift_and_is_named(
    change: Any, named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A real upstream change (a new instance type, a changed bound) still fails --check, and
    the message names the fact."""
    table = copy.deepcopy(generate.build())
    change(table)
    assert _check(table, tmp_path / "generated.json", monkeypatch) == 1
    assert named in capsys.readouterr().out


def test_check_mode_exits_1_on_drift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "generated.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(generate, "GENERATED", stale)
    assert generate.main(["--check"]) == 1
    assert generate.main([]) == 0 and generate.main(["--check"]) == 0
    assert not list(tmp_path.glob(".*.tmp"))  # written whole, through a temporary file
    done = subprocess.run(
        [sys.executable, "-m", "infra.clouds.aws.generate", "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout


def test_doctor_names_a_changed_name_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.clouds.aws import doctor

    names = copy.deepcopy(generate.build()["names"])
    (found,) = [f for f in doctor.botocore_findings() if f.fact == "botocore name rules"]
    assert found.status == "ok"
    names["sagemaker.EndpointName"]["max"] = 80
    monkeypatch.setattr(doctor, "_generated_names", lambda: names)
    (found,) = [f for f in doctor.botocore_findings() if f.fact == "botocore name rules"]
    assert found.status == "aged" and "sagemaker.EndpointName.max: 63 -> 80" in found.note


def test_ami_table_covers_exactly_the_botocore_gpu_amis() -> None:
    gpu = {v for v in aws.enum("sagemaker.ProductionVariantInferenceAmiVersion") if "-gpu-" in v}
    assert set(images.AMI_BY_NAME) == gpu, (
        "update INFERENCE_AMIS in infra/clouds/aws/sagemaker/images.py"
    )


def test_every_sagemaker_instance_the_kit_offers_is_a_botocore_instance_type() -> None:
    known = set(aws.enum("sagemaker.ProductionVariantInstanceType"))
    assert set(single_gpu_types()) <= known


def test_name_rules_come_from_botocore() -> None:
    limit, pattern = aws.name_bounds("sagemaker.EndpointName")
    assert aws_names.SAGEMAKER.limit == limit == 63 and aws_names.SAGEMAKER.pattern == pattern
    assert aws_names.SAGEMAKER.accepts("a" * 63) and not aws_names.SAGEMAKER.accepts("a" * 64)
    assert not aws_names.SAGEMAKER.accepts("a--") and aws_names.SAGEMAKER.accepts("a--b")


@pytest.mark.parametrize("family", sorted(aws_catalog.EC2_GPU_FAMILIES))
def test_every_size_botocore_lists_for_a_gpu_family_has_facts(family: str) -> None:
    """ml.g6e.4/8/16/24xlarge were refused because the hand table stopped at four sizes."""
    listed = set(aws.sagemaker_sizes(family))
    assert listed, f"botocore lists no ml.{family}.* type"
    assert listed == set(aws_catalog.EC2_GPU_FAMILIES[family].gpus), (
        f"infra/facts/hardware.py {family}: botocore lists {sorted(listed)}"
    )
    assert listed == set(aws_catalog.EC2_GPU_FAMILIES[family].disk_gb)
    assert listed == set(sizing.HOST[family]), f"sagemaker_ic/sizing.py HOST {family}"


@pytest.mark.parametrize("size", ["4xlarge", "8xlarge", "16xlarge", "24xlarge"])
def test_g6e_sizes_are_accepted_by_every_aws_target(size: str) -> None:
    gpus = 4 if size == "24xlarge" else 1
    assert sizing.ic_instance("k", f"ml.g6e.{size}").gpus == gpus
    spec = instance_spec("eks", f"g6e.{size}")
    assert spec.gpu is not None and spec.gpu.kind == "L40S"


@pytest.mark.parametrize("service", ["sagemaker", "ec2"])
def test_every_gpu_family_botocore_lists_is_described_or_refused(service: str) -> None:
    """g7e, g7, p5e, p5en, p6-b200/b300 (botocore 1.44.8) were refused as unknown."""
    known = set(aws_catalog.EC2_GPU_FAMILIES) | set(aws_catalog.UNSUPPORTED_GPU_FAMILIES)
    missing = set(aws.gpu_families(service)) - known
    assert not missing, f"add {sorted(missing)} to infra/facts/hardware.py"


def test_the_new_gpu_families_are_offered_where_aws_takes_them() -> None:
    assert sizing.ic_instance("k", "ml.p6-b200.48xlarge").gpus == 8
    assert sizing.ic_instance("k", "ml.g7e.12xlarge").gpus == 2
    spec = instance_spec("eks", "p5e.48xlarge")
    assert spec.gpu is not None and spec.gpu.kind == "H200" and spec.gpus == 8
    assert facts.GPUS["B200"].compute == (10, 0) and facts.GPUS["RTX-PRO-6000"].memory_gib == 96
    assert "ml.g7e.2xlarge" not in single_gpu_types()  # MME: g4dn, g5, p3 only


def test_doctor_names_a_gpu_family_the_kit_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.clouds.aws import doctor

    listed = {"sagemaker": [*aws.gpu_families("sagemaker"), "g8x"], "ec2": []}
    monkeypatch.setattr(doctor, "_generated_families", lambda: listed)
    (found,) = [f for f in doctor.botocore_findings() if f.fact == "GPU instance families"]
    assert found.status == "aged" and "g8x" in found.note


def test_g7_is_refused_with_its_driver_reason_on_every_aws_target(sample_repo: Path) -> None:
    """g7 sizes are in botocore's EC2 and SageMaker enums; the kit refuses them because they
    need NVIDIA driver 595 (the AMIs ship 580) and the sources disagree on GPUs per size."""
    assert "g7" in aws.gpu_families("ec2") and "g7" not in aws_catalog.EC2_GPU_FAMILIES
    assert aws.sagemaker_sizes("g7") == ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge",
                                         "48xlarge")  # fmt: skip
    with pytest.raises(ConfigError, match="driver 595") as refused:
        sizing.ic_instance("k", "ml.g7.12xlarge")
    assert "amazon-eks-ami" in refused.value.message
    result = CliRunner().invoke(
        app, ["validate", str(sample_repo), "--target", "eks",
              "--instance-type", "g7.12xlarge"],
    )  # fmt: skip
    assert result.exit_code == 1 and "TDK910" in result.output and "driver 595" in result.output

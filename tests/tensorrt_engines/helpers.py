"""A BERT-shaped model directory and engine records for the `tdk build` tests."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bench.bert_onnx import write_model_dir
from infra.tensorrt_engines.stage import BuildOptions, BuildTarget, EngineBuild, engine_build
from packager.tensorrt.engines import EngineRecord, Parity

SEQ = ("input_ids:1,64,128", "attention_mask:1,64,128", "token_type_ids:1,64,128")
#: the gke-dev stack's GPU and release (Pulumi.gke-dev.yaml: nvidia-l4, Triton 26.05)
L4_2605 = BuildTarget("nvidia-l4", "L4", (8, 9), "26.05", None, "26.04")


def model_dir(tmp_path: Path) -> Path:
    return write_model_dir(tmp_path / "repo")


def planned(model: Path, target: BuildTarget = L4_2605, **options: object) -> EngineBuild:
    return engine_build(model, target, BuildOptions(SEQ, **options))  # type: ignore[arg-type]


def record_for(build: EngineBuild, plan: bytes, passed: bool = True) -> EngineRecord:
    compute = build.key.compute
    return EngineRecord(
        key=build.key,
        built_for=f"{compute}:10.16@{build.target.container_release}",
        plan_sha256=hashlib.sha256(plan).hexdigest(),
        parity=Parity(4e-5, 2e-4, 1e-3, 1e-3, passed),
        tensorrt_full="10.16.1.11",
    )


def fake_plan() -> bytes:
    return b"ftrt" + os.urandom(64)

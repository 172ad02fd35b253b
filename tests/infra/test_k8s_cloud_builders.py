"""Pure builders of the gke and eks targets that the stack tests do not reach."""

from __future__ import annotations

import json

import pytest

from infra.targets.eks import builders as eks
from infra.targets.gke import builders as gke


def test_release_read_policy_without_prefix_covers_the_bucket_only() -> None:
    statements = json.loads(eks.release_read_policy("b", ""))["Statement"]
    assert statements[0]["Resource"] == "arn:aws:s3:::b/*"
    assert statements[1]["Condition"]["StringLike"]["s3:prefix"] == ["*"]


def test_release_read_policy_lists_only_under_the_prefix() -> None:
    statements = json.loads(eks.release_read_policy("b", "r/v2"))["Statement"]
    assert statements[0]["Resource"] == "arn:aws:s3:::b/r/v2/*"
    assert statements[1]["Condition"]["StringLike"]["s3:prefix"] == ["r/v2/*", "r/v2"]


@pytest.mark.parametrize(
    ("instance", "gpus"),
    [("g5.xlarge", 1), ("g5.12xlarge", 4), ("g6e.48xlarge", 8), ("p4d.24xlarge", 8)],
)
def test_gpus_per_instance(instance: str, gpus: int) -> None:
    assert eks.gpus_of(instance) == gpus


@pytest.mark.parametrize("module", [eks, gke])
def test_kubeconfigs_authenticate_with_exec_plugins_not_keys(module: object) -> None:
    if module is eks:
        text = eks.kubeconfig("c", "https://x", "Q0E=", "us-east-1")
    else:
        text = gke.kubeconfig("c", "10.0.0.1", "Q0E=")
    config = json.loads(text)
    user = config["users"][0]["user"]
    assert set(user) == {"exec"}
    assert config["clusters"][0]["cluster"]["certificate-authority-data"] == "Q0E="


def test_gcs_condition_scopes_object_reads_to_the_prefix() -> None:
    condition = gke.release_read_condition("bkt", "a/b")
    assert condition["expression"] == (
        'resource.name.startsWith("projects/_/buckets/bkt/objects/a/b/") || '
        'resource.name == "projects/_/buckets/bkt"'
    )


def test_gke_gpu_pool_args_scale_to_zero_and_pin_zones() -> None:
    pool = gke.GpuPool("nvidia-tesla-t4", "n1-standard-8", 1, 0, 3, True, "DEFAULT", ("z-a",))
    args = gke.gpu_node_pool_args(pool, "sa@p.iam.gserviceaccount.com")
    assert args["autoscaling"]["total_min_node_count"] == 0
    assert args["node_locations"] == ["z-a"]
    assert args["node_config"]["spot"] is True


def test_the_engine_builder_may_write_only_the_engine_cache() -> None:
    """tdk build's Job uploads engines as the engine builder; Triton's identity writes nothing."""
    read = json.loads(eks.release_read_policy("b", "r/v2"))["Statement"]
    assert [s for s in read if "Put" in str(s["Action"]) or "Delete" in str(s["Action"])] == []
    statements = json.loads(eks.engine_build_policy("b", "r/v2"))["Statement"]
    writes = [s for s in statements if "Put" in str(s["Action"])]
    assert writes == [
        {"Sid": "WriteEngineCache", "Effect": "Allow", "Action": "s3:PutObject",
         "Resource": "arn:aws:s3:::b/r/v2/engines/*"},
    ]  # fmt: skip
    at_root = json.loads(eks.engine_build_policy("b", ""))["Statement"]
    assert {s["Resource"] for s in at_root} == {"arn:aws:s3:::b/engines/*", "arn:aws:s3:::b"}
    condition = gke.engine_cache_condition("bkt", "")
    assert condition["expression"] == (
        'resource.name.startsWith("projects/_/buckets/bkt/objects/engines/")'
    )

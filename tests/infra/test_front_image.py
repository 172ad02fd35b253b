"""``k8sModelMode: mme`` without ``k8sFrontImage``: the program builds docker/front.Dockerfile
with pulumi-docker-build and pushes it to the cloud's registry (gke: Artifact Registry, eks:
ECR; Azure's in tests/targets/<its target>/test_front_registry.py), the pods run the pushed
digest, and the nodes may pull it; a prebuilt image skips all of it. The real program under
mocks."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from infra.clouds.aws.names import ECR_REPOSITORY
from infra.clouds.gcp.names import ARTIFACT_REGISTRY_REPOSITORY
from infra.k8s.config import BUILT_FRONT_IMAGE
from infra.targets import load_target
from infra.targets.eks.cloud_names import front_repository
from infra.targets.gke.cloud_names import DERIVED as GKE_DERIVED
from tdk.errors import ConfigError
from tests.clouds.aws.mocks import ECR_PASSWORD
from tests.clouds.gcp.mocks import ACCESS_TOKEN
from tests.infra.pulumi_harness import IMAGE_DIGEST, Declared, StackRun, run_stack
from tests.registry_lists import cloud_kubernetes_targets, dev_stack, kubernetes_targets, read_dev

BUILD = {"k8sModelMode": "mme"}
PREBUILT = {"k8sModelMode": "mme", "k8sFrontImage": "registry.example.com/tdk-front:1"}
IMAGE = "docker-build:index:Image"


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")


@cache
def _run(target: str) -> StackRun:
    return run_stack(dev_stack(target), overrides=BUILD)


def _unsecret(value: Any) -> Any:
    """An input Pulumi marked secret arrives wrapped (signature key + ``value``)."""
    if isinstance(value, dict) and "value" in value and len(value) == 2:
        return value["value"]
    return value


def _front(run: StackRun) -> dict[str, Any]:
    deployment = run.one("kubernetes:apps/v1:Deployment").inputs
    (front,) = [c for c in deployment["spec"]["template"]["spec"]["containers"]
                if c["name"] == "front"]  # fmt: skip
    return front


def _image(run: StackRun) -> Declared:
    return run.one(IMAGE)


def check_built_image(run: StackRun) -> None:
    """What every cloud's build is: the repository root as context (relative), the front's
    Dockerfile, linux/amd64, pushed (built by ``pulumi up`` only), and the pods running the
    pushed tag's digest, which the ``frontImage`` output names."""
    inputs = _image(run).inputs
    assert inputs["context"] == {"location": "."}
    assert inputs["dockerfile"] == {"location": "docker/front.Dockerfile"}
    assert inputs["platforms"] == ["linux/amd64"]
    assert inputs["push"] is True
    assert inputs["buildOnPreview"] is False
    (tag,) = inputs["tags"]
    assert _front(run)["image"] == f"{tag}@{IMAGE_DIGEST}" == run.outputs["frontImage"]


def test_gke_builds_the_front_and_runs_its_digest() -> None:
    check_built_image(_run("gke"))


def test_eks_builds_the_front_and_runs_its_digest() -> None:
    check_built_image(_run("eks"))


def test_gke_pushes_to_its_artifact_registry_with_the_callers_token() -> None:
    run = _run("gke")
    repository = run.one("gcp:artifactregistry/repository:Repository").inputs
    assert (repository["format"], repository["repositoryId"]) == ("DOCKER", "tdk-gke-dev-front")
    assert ARTIFACT_REGISTRY_REPOSITORY.accepts(repository["repositoryId"])
    (registry,) = _unsecret(_image(run).inputs["registries"])
    region = repository["location"]
    assert registry == {
        "address": f"{region}-docker.pkg.dev", "username": "oauth2accesstoken",
        "password": ACCESS_TOKEN,
    }  # fmt: skip
    (tag,) = _image(run).inputs["tags"]
    assert tag == f"{region}-docker.pkg.dev/my-gcp-project/tdk-gke-dev-front/tdk-front:latest"
    apis = {r.inputs["service"] for r in run.of_type("gcp:projects/service:Service")}
    assert "artifactregistry.googleapis.com" in apis


def test_gke_nodes_and_only_they_may_read_the_repository() -> None:
    run = _run("gke")
    (grant,) = run.of_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember")
    assert grant.inputs["role"] == "roles/artifactregistry.reader"
    (nodes,) = [a.inputs["accountId"] for a in run.of_type("gcp:serviceaccount/account:Account")
                if a.name == "tdk-gke-dev-nodes"]  # fmt: skip
    email = f"{nodes}@my-gcp-project.iam.gserviceaccount.com"
    assert grant.inputs["member"] == f"serviceAccount:{email}"


def test_eks_pushes_to_its_ecr_repository_with_ecr_s_token() -> None:
    run = _run("eks")
    repository = run.one("aws:ecr/repository:Repository").inputs
    assert repository["name"] == "tdk-eks-dev/tdk-front"
    assert repository["imageScanningConfiguration"] == {"scanOnPush": True}
    (registry,) = _unsecret(_image(run).inputs["registries"])
    assert registry == {
        "address": "123456789012.dkr.ecr.us-east-1.amazonaws.com", "username": "AWS",
        "password": ECR_PASSWORD,
    }  # fmt: skip


def test_eks_nodes_may_pull_and_nothing_more() -> None:
    run = _run("eks")
    policy = json.loads(run.one("aws:ecr/repositoryPolicy:RepositoryPolicy").inputs["policy"])
    (statement,) = policy["Statement"]
    assert statement["Principal"] == {"AWS": "arn:aws:mock:::role/tdk-eks-dev-nodes"}
    assert sorted(statement["Action"]) == [
        "ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer",
    ]  # fmt: skip


@pytest.mark.parametrize("target", kubernetes_targets())
def test_a_prebuilt_image_skips_the_build(target: str) -> None:
    run = run_stack(dev_stack(target), overrides=PREBUILT)
    assert not run.of_type(IMAGE)
    assert not [r for r in run.resources if r.type.endswith("FrontRegistry")]
    assert _front(run)["image"] == PREBUILT["k8sFrontImage"]
    assert "frontImage" not in run.outputs


@pytest.mark.parametrize("target", cloud_kubernetes_targets())
def test_render_names_the_stack_output_the_build_fills(target: str) -> None:
    config = read_dev(target, BUILD)
    spec = load_target(target).workload_spec(config, lambda output: output)
    assert spec.front is not None and spec.front.image == BUILT_FRONT_IMAGE


@pytest.mark.parametrize(
    "target", [t for t in kubernetes_targets() if t not in cloud_kubernetes_targets()]
)
def test_without_a_cloud_registry_the_front_image_is_the_stack_s(target: str) -> None:
    """No cloud, no registry to push a built front to: an empty k8sFrontImage in mme mode is
    refused naming the key and the fix; a given image is what the pods run."""
    with pytest.raises(ConfigError) as refused:
        read_dev(target, BUILD)
    assert "k8sFrontImage" in refused.value.message and "docker/front.Dockerfile" in (
        refused.value.hint
    )
    image = "registry.example/tdk-front:1"
    config = read_dev(target, {**BUILD, "k8sFrontImage": image})
    spec = load_target(target).workload_spec(config, lambda output: output)
    assert spec.front is not None and spec.front.image == image


def test_ecr_s_rule_comes_from_botocore_and_is_applied() -> None:
    import botocore.session

    shape = botocore.session.get_session().get_service_model("ecr").shape_for("RepositoryName")
    assert (ECR_REPOSITORY.limit, ECR_REPOSITORY.pattern) == (
        shape.metadata["max"], shape.metadata["pattern"],
    )  # fmt: skip
    assert front_repository("Tdk-Prod") == "tdk-prod/tdk-front"
    assert front_repository("1-" + "x" * 38) == "1-" + "x" * 38 + "/tdk-front"
    for bad in ("-a/b", "a/b/", "A/b", "a//b", "a" * 257):
        assert not ECR_REPOSITORY.accepts(bad), bad
    with pytest.raises(ConfigError, match="ECR repository name"):
        front_repository("a_")  # a name the kit's own rule refuses first (1-40 of a-z 0-9 -)


def test_artifact_registry_s_rule_is_checked_with_the_stack_s_names() -> None:
    assert ARTIFACT_REGISTRY_REPOSITORY.accepts("tdk-gke-dev-front")
    for bad in ("1tdk", "tdk-", "Tdk", "t" * 64):
        assert not ARTIFACT_REGISTRY_REPOSITORY.accepts(bad), bad
    derived = {d.template: d.rule for d in GKE_DERIVED}
    assert derived["{name}-front"] is ARTIFACT_REGISTRY_REPOSITORY

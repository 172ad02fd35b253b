"""A release read with a Secret's keys (``infra.k8s.store_access``): every container that reads
the store gets them, the Secret's variables before those built from them, and the manifests
stay valid under strict validation, in both model modes and with a model sync."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from infra.k8s import manifests
from infra.k8s.spec import FrontSpec, ModelSync
from infra.k8s.store_access import VOLUME, SecretEnv, StoreAccess
from tests.infra.test_k8s_manifests import K8S_VERSION, make_spec

ACCESS = StoreAccess(
    secret="release-creds",
    env=(SecretEnv("ACCOUNT_KEY", "key"), SecretEnv("TOKEN", "token", optional=True)),
    expanded=(("CONNECTION", "Key=$(ACCOUNT_KEY)"),),
    mount_path="/var/run/release",
)
FRONT = FrontSpec("registry.example/tdk-front:1", "s3://bucket/r1", 10 * 2**30, 8 * 2**30)
SYNC = ModelSync("registry.example/sync:1", ("sync", "s3://bucket/r1/repository", "/models"))


def _containers(spec_changes: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    deployment = manifests.deployment(make_spec(store_access=ACCESS, **spec_changes))
    assert kubernetes_validate.validate(deployment, K8S_VERSION, strict=True) == K8S_VERSION
    pod = deployment["spec"]["template"]["spec"]
    return pod, [*pod.get("initContainers", []), *pod["containers"]]


@pytest.mark.parametrize(
    "changes", [{}, {"front": FRONT}, {"model_sync": SYNC}], ids=["all", "mme", "sync"]
)
def test_every_container_reading_the_store_gets_the_secret(changes: dict[str, Any]) -> None:
    pod, containers = _containers(changes)
    assert len(containers) == (1 if not changes else 2)
    for container in containers:
        names = [item["name"] for item in container["env"]]
        # the kubelet expands $(ACCOUNT_KEY) only from a variable defined before it
        assert names.index("ACCOUNT_KEY") < names.index("CONNECTION")
        by_name = {item["name"]: item for item in container["env"]}
        ref = by_name["TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "release-creds", "key": "token", "optional": True}
        assert "optional" not in by_name["ACCOUNT_KEY"]["valueFrom"]["secretKeyRef"]
        assert by_name["CONNECTION"] == {"name": "CONNECTION", "value": "Key=$(ACCOUNT_KEY)"}
        mount = {"name": VOLUME, "mountPath": "/var/run/release", "readOnly": True}
        assert mount in container["volumeMounts"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == VOLUME]
    assert volume["secret"] == {"secretName": "release-creds", "defaultMode": 0o440}


def test_no_secret_without_store_access_and_no_volume_without_a_mount_path() -> None:
    plain = manifests.deployment(make_spec())["spec"]["template"]["spec"]
    assert all(v["name"] != VOLUME for v in plain["volumes"])
    assert "valueFrom" not in str(plain["containers"][0]["env"])
    env_only = StoreAccess("release-creds", (SecretEnv("KEY", "key"),))
    pod = manifests.deployment(make_spec(store_access=env_only))["spec"]["template"]["spec"]
    assert all(v["name"] != VOLUME for v in pod["volumes"])
    assert all(m["name"] != VOLUME for m in pod["containers"][0]["volumeMounts"])
    assert pod["containers"][0]["env"][-1]["valueFrom"]["secretKeyRef"]["key"] == "key"

"""Engine pods that load: NGC's ``triton-server`` user (uid 1000) has no home directory, so
every LLM engine pod gets a writable ``HOME`` and ``HF_HOME`` (an emptyDir when no weight cache
is claimed). The rendered Deployment is run here as that user would run it: uid 1000, the
pod's ``fsGroup``, each volume a group-writable directory and the rest of the image root's."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.infra.test_llm_render import _deployment, _project, _render
from tests.validate.llm import corpus as c

#: the NGC image's passwd entry for uid 1000 names this home, which does not exist
NGC_HOME = "/home/triton-server"
#: what the engines do at load: Hugging Face's hub cache and vLLM's own cache under HOME
ENGINE_WRITES = """
import os, pathlib
home = pathlib.Path(os.environ.get("HOME", os.environ["NGC_HOME"]))
hf = pathlib.Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
(hf / "hub" / "models--facebook--opt-125m").mkdir(parents=True, exist_ok=True)
(home / ".cache" / "vllm").mkdir(parents=True, exist_ok=True)
(hf / "hub" / "weights.safetensors").write_bytes(b"w")
"""


def _pod(tmp_path: Path, **keys: object) -> tuple[dict[str, Any], dict[str, Any]]:
    repo = c.vllm_repo(tmp_path / "repo")
    project = _project(tmp_path, "gke-dev", **keys)
    pod = _deployment(_render(project, "gke-dev", repo, tmp_path / "out"))["spec"]["template"]
    [triton] = pod["spec"]["containers"]
    return pod["spec"], triton


def _writable_mounts(pod: dict[str, Any], triton: dict[str, Any]) -> dict[str, str]:
    volumes = {v["name"]: v for v in pod["volumes"]}
    return {
        m["mountPath"]: next(
            k for k in ("emptyDir", "persistentVolumeClaim") if k in volumes[m["name"]]
        )
        for m in triton["volumeMounts"]
        if not m.get("readOnly")
    }


@pytest.mark.parametrize("claim", [None, "weights"])
def test_home_and_hf_home_are_on_writable_volumes(tmp_path: Path, claim: str | None) -> None:
    keys = {"k8sWeightCacheClaim": claim} if claim else {}
    pod, triton = _pod(tmp_path, **keys)
    env = {e["name"]: e.get("value") for e in triton["env"]}
    mounts = _writable_mounts(pod, triton)
    for name in ("HOME", "HF_HOME"):
        assert name in env, f"{name} unset: uid 1000 has no home in the NGC image"
        where = [m for m in mounts if env[name] == m or env[name].startswith(m + "/")]
        assert where and where[0] != "/dev/shm", (name, env[name], mounts)
    hf_volume = mounts[next(m for m in mounts if env["HF_HOME"].startswith(m + "/"))]
    assert hf_volume == ("persistentVolumeClaim" if claim else "emptyDir")


#: a Python uid 1000 may run (the test's own may sit under root's home)
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(
    os.geteuid() != 0 or not SYSTEM_PYTHON.is_file(),
    reason="switching to uid 1000 needs root and a system python3",
)
def test_the_ngc_user_can_write_what_the_engine_writes(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pod, triton = _pod(tmp_path)
    root = Path(tempfile.mkdtemp(prefix="tdk-ngc-root-"))  # pytest's base is root's, 0700
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    (root / "home").mkdir(parents=True)  # the image's /home: root's, no triton-server in it
    group = pod["securityContext"]["fsGroup"]
    for mount in _writable_mounts(pod, triton):  # kubelet: group fsGroup, setgid, g+rwx
        path = root / mount.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, 0, group)
        path.chmod(0o2775)
    root.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "NGC_HOME": str(root / NGC_HOME.lstrip("/"))}
    for item in triton["env"]:
        if item["name"] in ("HOME", "HF_HOME"):
            env[item["name"]] = str(root / item["value"].lstrip("/"))
    user = pod["securityContext"]["runAsUser"]
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", ENGINE_WRITES], env=env, user=user, group=group, cwd=root,
        extra_groups=[group], capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

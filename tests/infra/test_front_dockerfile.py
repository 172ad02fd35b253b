"""``docker/front.Dockerfile``, the image of an ``mme`` pod's front: no Docker daemon exists
here, so its contents are checked against what the pod and the kit expect (issue 46 item 5)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from infra.k8s import mme
from infra.k8s.manifests import deployment
from infra.k8s.spec import FrontSpec
from tests.infra.test_k8s_manifests import make_spec

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "front.Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _one(word: str) -> str:
    (found,) = [rest for w, rest in _instructions() if w == word]
    return found


def test_base_image_is_pinned_with_its_source_and_date() -> None:
    base = _one("FROM")
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base), base
    version = base.split(":")[1].split("-")[0]
    comments = DOCKERFILE.read_text()
    assert "docker-library/python" in comments and version in comments
    assert re.search(r"checked 2026-\d\d-\d\d", comments)


def test_front_runs_as_the_pods_non_root_user() -> None:
    user = _one("USER")
    uid = int(user.split(":")[0])
    pod = deployment(make_spec())["spec"]["template"]["spec"]["securityContext"]
    assert uid != 0 and uid == pod["runAsUser"] and pod["runAsNonRoot"]
    # the user is the last word: nothing after it runs as root
    assert [w for w, _ in _instructions()].index("USER") > max(
        i for i, (w, _) in enumerate(_instructions()) if w == "RUN"
    )


def test_installs_the_kit_without_its_infra_extras() -> None:
    installs = [rest for w, rest in _instructions() if w == "RUN" and "pip install" in rest]
    (install,) = installs
    assert re.search(r"pip install .*\s\.(\s|$)", install), install  # the kit itself
    assert "[" not in install.split("pip install", 1)[1].split("&&")[0]  # no extras
    assert "pulumi" not in " ".join(rest for _, rest in _instructions()).lower()
    lock = re.search(r"--constraint (\S+)", install)
    assert lock and (ROOT / lock.group(1)).is_file()
    base = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [dep for dep in base if dep.lower().startswith("pulumi")]
    copied = [rest.split()[0] for w, rest in _instructions() if w == "COPY"]
    assert {"tdk", "packager", "cli", "infra", "pyproject.toml"} <= set(copied)
    assert all((ROOT / path).exists() for path in copied)


def test_entrypoint_is_the_fronts_contract() -> None:
    entrypoint = json.loads(_one("ENTRYPOINT"))
    front = FrontSpec("img", "s3://bucket/r1", 2**30, 2**30)
    args = mme.front_args(front)
    assert entrypoint == args[:3] == ["tdk", "front", "serve"]
    container = mme.front_container(make_spec(front=front), front)
    assert [*container["command"], *container["args"]][:3] == entrypoint
    assert _one("EXPOSE") == str(container["ports"][0]["containerPort"])

"""``tdk:k8s:FrontImage``: docker/front.Dockerfile built with ``pulumi-docker-build`` (BuildKit)
and pushed to the cloud's registry, for an ``mme`` stack whose ``k8sFrontImage`` is empty.

The cloud's target declares the repository, grants its nodes pull and says how to log in (a
short-lived token the cloud's provider hands the caller: no key is stored); this component
builds for the nodes' platform and exposes ``ref``, the pushed image's tag with its digest
(``<repository>:<tag>@sha256:...``), which the pod spec runs, so a new build rolls the pods
and an old pod never runs a retagged image.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_docker_build as docker_build

from infra.k8s.config import FRONT_IMAGE_NAME

#: the repository root: the build context (the Dockerfile installs the kit from it)
ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = "docker/front.Dockerfile"
#: the GPU and CPU node pools of every target are x86-64
PLATFORM = docker_build.Platform.LINUX_AMD64
#: the image's name in its repository, and the tag each build moves (pods run the digest)
IMAGE_NAME = FRONT_IMAGE_NAME
TAG = "latest"


@dataclass(frozen=True)
class RegistryLogin:
    """Where to push (``address``: the registry host) and as whom (``password``: a token)."""

    address: pulumi.Input[str]
    username: pulumi.Input[str]
    password: pulumi.Input[str]


def build_args(repository: pulumi.Input[str], login: RegistryLogin) -> dict[str, Any]:
    """The ``docker_build.Image`` arguments: the repository root as context (relative to the
    program's directory, so the stack's state names no machine's path), the front's
    Dockerfile, linux/amd64, pushed to ``repository`` with ``login``."""
    tag = pulumi.Output.concat(repository, f":{TAG}")
    return {
        "context": docker_build.BuildContextArgs(location=os.path.relpath(ROOT)),
        "dockerfile": docker_build.DockerfileArgs(location=os.path.relpath(ROOT / DOCKERFILE)),
        "platforms": [PLATFORM],
        "push": True,
        "build_on_preview": False,  # a preview needs no BuildKit; `pulumi up` builds
        "tags": [tag],
        "registries": [
            docker_build.RegistryArgs(
                address=login.address,
                username=login.username,
                password=pulumi.Output.secret(login.password),
            )
        ],
    }


class FrontImage(pulumi.ComponentResource):
    """The built and pushed front image; ``ref`` is what the pods run."""

    def __init__(
        self,
        name: str,
        repository: pulumi.Input[str],
        login: RegistryLogin,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:k8s:FrontImage", name, None, opts)
        self.image = docker_build.Image(
            name, **build_args(repository, login), opts=pulumi.ResourceOptions(parent=self)
        )
        self.ref: pulumi.Output[str] = self.image.ref
        self.register_outputs({"ref": self.ref})

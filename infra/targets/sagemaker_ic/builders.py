"""Pure builders of the sagemaker-ic stack: endpoint variant, model container, components.

Arguments are plain data in the Pulumi providers' (snake_case) form; ``requests`` maps what
the program declares to the SageMaker API's request shapes, which tests validate with botocore.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from infra.targets.base import EXAMPLE_MODEL_NAME
from infra.targets.sagemaker_ic.config import (
    VARIANT_NAME,
    ComponentSpec,
    IcScaling,
    Rolling,
    Startup,
)
from infra.targets.sagemaker_ic.generate import REPOSITORY_PREFIX, generate_container

#: SageMaker Triton image: the directory under /opt/ml/model it serves in single-model mode
#: (triton-inference-server/server docker/sagemaker/serve, checked 2026-11-24:
#: https://github.com/triton-inference-server/server/blob/main/docker/sagemaker/serve)
DEFAULT_MODEL_ENV = "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"
#: RoutingStrategy enum (botocore sagemaker service-2.json, checked 2026-11-24)
ROUTING = "LEAST_OUTSTANDING_REQUESTS"


def endpoint_variant(instance_type: str, scaling: IcScaling, ami_version: str) -> dict[str, Any]:
    """The one production variant: no model (components bring theirs), managed instance
    scaling (min may be 0), least-outstanding-requests routing, the inference AMI."""
    return {
        "variant_name": VARIANT_NAME,
        "instance_type": instance_type,
        "initial_instance_count": scaling.initial_instances,
        "managed_instance_scaling": {
            "status": "ENABLED",
            "min_instance_count": scaling.min_instances,
            "max_instance_count": scaling.max_instances,
        },
        "routing_configs": [{"routing_strategy": ROUTING}],
        "inference_ami_version": ami_version,
    }


def model_container(
    image: str, release_url: str, spec: ComponentSpec, environment: dict[str, str]
) -> dict[str, Any]:
    """``aws.sagemaker.Model`` primary container: the Triton image on one copy's archive, which
    is a one-model Triton repository (ensembles carry their composing models); a decoupled copy
    (no archive) is served from the release's repository/ in Triton's generate mode
    (``generate.py``)."""
    if spec.decoupled:
        env = {**environment, DEFAULT_MODEL_ENV: spec.copy}
        return generate_container(image, release_url, env)
    return {
        "image": image,
        "mode": "SingleModel",
        "model_data_url": f"{release_url}/{spec.archive}",
        "environment": {**environment, DEFAULT_MODEL_ENV: spec.copy},
    }


def release_prefixes(components: Sequence[ComponentSpec]) -> tuple[str, ...]:
    """What the components' role reads in the release: mme/ archives, and repository/ where a
    decoupled copy is served from it."""
    if any(spec.decoupled for spec in components):
        return ("mme/", REPOSITORY_PREFIX)
    return ("mme/",)


#: RollingUpdatePolicy.MaximumBatchSize "must be between 5% to 50% of the copy count of the
#: inference component"; InferenceComponentCapacitySize.Type is COPY_COUNT or CAPACITY_PERCENT
#: (botocore 1.44.8 sagemaker service-2.json; https://docs.aws.amazon.com/sagemaker/latest/
#: APIReference/API_InferenceComponentRollingUpdatePolicy.html; checked 2026-11-27). A
#: percentage is valid at every copy count autoscaling may reach (1, 0 or over 20 copies); a
#: count fixed from initialCopies was not.
ROLLING_PERCENT = (5, 50)


def deployment_config(rolling: Rolling, rollback_alarms: Sequence[Any]) -> dict[str, Any]:
    """Rolling updates of a component, ``batch_percent`` of its copies at a time, rolled back
    when one of ``rollback_alarms`` fires (UpdateInferenceComponent DeploymentConfig)."""
    batch = {"type": "CAPACITY_PERCENT", "value": rolling.batch_percent}
    config: dict[str, Any] = {
        "rolling_update_policy": {
            "maximum_batch_size": batch,
            "rollback_maximum_batch_size": batch,
            "wait_interval_in_seconds": rolling.wait_seconds,
        }
    }
    if rollback_alarms:
        config["auto_rollback_configuration"] = {
            "alarms": [{"alarm_name": name} for name in rollback_alarms]
        }
    return config


def component_args(
    spec: ComponentSpec, endpoint_name: Any, model_name: Any, startup: Startup
) -> dict[str, Any]:
    """``aws-native:sagemaker:InferenceComponent`` arguments, deployment config aside."""
    needs = spec.needs
    requirements: dict[str, Any] = {
        "min_memory_required_in_mb": needs.memory_mb,
        "number_of_cpu_cores_required": needs.cpu_cores,
    }
    if needs.accelerators:
        requirements["number_of_accelerator_devices_required"] = float(needs.accelerators)
    return {
        "inference_component_name": spec.component,
        "endpoint_name": endpoint_name,
        "variant_name": VARIANT_NAME,
        "specification": {
            "model_name": model_name,
            "compute_resource_requirements": requirements,
            "startup_parameters": {
                "model_data_download_timeout_in_seconds": startup.download_timeout,
                "container_startup_health_check_timeout_in_seconds": startup.health_check_timeout,
            },
        },
        # CopyCount >= 1 at create: a minimum of 0 copies is reached by scaling in, never at
        # create (https://docs.aws.amazon.com/sagemaker/latest/dg/
        # endpoint-auto-scaling-zero-instances.html, checked 2026-11-26)
        "runtime_config": {"copy_count": spec.initial_copies},
    }


#: what the program logs while no release is published (the stack output nextStep says how)
AWAITING_WARNING = (
    "no inference component is declared yet: the stack names no published release, and a "
    "component whose copy has no archive fails to create. See `pulumi stack output nextStep`"
)


def next_step(release_url: str, key: str, stack: str) -> str:
    """The commands that publish the release and declare the components (``key`` "": the
    stack's own bucket, which the stack must then name in releaseUrl)."""
    package = shlex.join(["tdk", "package", "MODEL_REPO", "--release", release_url])
    steps = [package]
    if not key:
        steps.append(shlex.join(["pulumi", "config", "set",
                                 "triton-deploy-kit:releaseUrl", release_url,
                                 "-s", stack]))  # fmt: skip
    steps.append(shlex.join(["pulumi", "up", "-s", stack]))
    return " && ".join(steps)


def invoke_command(target: str, endpoint: str, region: str, release_url: str) -> str:
    """The exact ``tdk invoke`` line for this endpoint (the sample model as the example)."""
    return shlex.join(
        [
            "tdk", "invoke", "--target", target, "--endpoint", endpoint, "--region", region,
            "--release", release_url, "--target-model", EXAMPLE_MODEL_NAME,
            "--text", "a short test sentence",
        ]
    )  # fmt: skip

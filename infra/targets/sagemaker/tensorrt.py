"""A TensorRT engine built on a SageMaker endpoint's own instance type: the CreateProcessingJob
request (docs/build.md, "SageMaker: a Processing job on the endpoint's instance type").

The job runs ``pod_build.py`` from the staged inputs in ``<entry>input/`` inside the user's ECR
mirror of ``nvcr.io/nvidia/tensorrt:<release>-py3`` on the endpoint's instance type, and
uploads ``model.plan`` and ``plan.json`` to ``<entry>output/`` at the end
(``S3UploadMode: EndOfJob``); ``packager.tensorrt.engines.adopt_output`` then checks and caches
them.
Shapes from botocore's SageMaker service model (``CreateProcessingJob``; its
``ProcessingInstanceType`` enum lists ml.g4dn/g5/g6/g6e; botocore 1.44.8, checked 2026-11-27).
Pure data: no boto3 call here.
"""

from __future__ import annotations

import re
from typing import Any

from packager.tensorrt.engines import OUTPUT_DIR

INPUT = "/opt/ml/processing/input"
WORK = "/opt/ml/processing/work"
OUTPUT = "/opt/ml/processing/output"
#: the processing job's local volume for the model, inputs and engine (GB)
VOLUME_GB = 30
_NAME = re.compile(r"[^a-zA-Z0-9-]")


def job_name(entry_url: str, stack: str) -> str:
    """``tdk-build-<stack>-<key digest>``: at most 63 characters of ``[a-zA-Z0-9-]``."""
    digest = entry_url.rstrip("/").rsplit("/", 1)[-1][:12]
    return _NAME.sub("-", f"tdk-build-{stack}")[: 63 - len(digest) - 1] + f"-{digest}"


def processing_job_request(
    name: str,
    instance_type: str,
    image_uri: str,
    role_arn: str,
    entry_url: str,
    max_seconds: int,
) -> dict[str, Any]:
    """CreateProcessingJob's request: one ``instance_type`` instance runs the TensorRT image
    on ``<entry_url>input/`` and uploads the engine and its record to ``<entry_url>output/``."""
    run = (
        f"cp -r {INPUT}/. {WORK} && python3 {WORK}/pod_build.py {WORK} && "
        f"cp {WORK}/model.plan {WORK}/plan.json {OUTPUT}/"
    )
    return {
        "ProcessingJobName": name,
        "RoleArn": role_arn,
        "AppSpecification": {"ImageUri": image_uri, "ContainerEntrypoint": ["sh", "-c", run]},
        "ProcessingResources": {
            "ClusterConfig": {
                "InstanceCount": 1,
                "InstanceType": instance_type,
                "VolumeSizeInGB": VOLUME_GB,
            }
        },
        "ProcessingInputs": [
            {
                "InputName": "build",
                "S3Input": {
                    "S3Uri": entry_url + "input",
                    "LocalPath": INPUT,
                    "S3DataType": "S3Prefix",
                    "S3InputMode": "File",
                },
            }
        ],
        "ProcessingOutputConfig": {
            "Outputs": [
                {
                    "OutputName": "engine",
                    "S3Output": {
                        "S3Uri": entry_url + OUTPUT_DIR.rstrip("/"),
                        "LocalPath": OUTPUT,
                        "S3UploadMode": "EndOfJob",
                    },
                }
            ]
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": max_seconds},
        "Tags": [{"Key": "managed-by", "Value": "triton-deploy-kit"}],
    }

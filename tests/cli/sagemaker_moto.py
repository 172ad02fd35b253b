"""A moto server on 127.0.0.1 that boto3 reaches through ``AWS_ENDPOINT_URL``, plus a
SageMaker MME endpoint declared in it the way the Pulumi stack declares one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

REGION = "us-east-1"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"


@contextmanager
def moto_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Start ThreadedMotoServer on a free port; point every boto3 client at it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        monkeypatch.setenv("AWS_ENDPOINT_URL", url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        yield url
    finally:
        server.stop()


def create_mme_endpoint(
    name: str, instance_type: str = "ml.g4dn.xlarge", region: str = REGION
) -> None:
    """Model (MultiModel) -> EndpointConfig -> Endpoint, plus its scalable target."""
    import boto3

    sagemaker = boto3.client("sagemaker", region_name=region)
    sagemaker.create_model(
        ModelName=f"{name}-model",
        ExecutionRoleArn="arn:aws:iam::123456789012:role/tdk",
        PrimaryContainer={
            "Image": IMAGE,
            "Mode": "MultiModel",
            "ModelDataUrl": "s3://models/release/mme/",
        },
    )
    variant: Any = {
        "VariantName": "AllTraffic",
        "ModelName": f"{name}-model",
        "InstanceType": instance_type,
        "InitialInstanceCount": 1,
    }
    sagemaker.create_endpoint_config(
        EndpointConfigName=f"{name}-config", ProductionVariants=[variant]
    )
    sagemaker.create_endpoint(EndpointName=name, EndpointConfigName=f"{name}-config")
    boto3.client("application-autoscaling", region_name=region).register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId=f"endpoint/{name}/variant/AllTraffic",
        ScalableDimension="sagemaker:variant:DesiredInstanceCount",
        MinCapacity=1,
        MaxCapacity=3,
    )

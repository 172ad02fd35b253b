"""The SageMaker Processing job that builds a plan on the endpoint's instance type: its
CreateProcessingJob request as botocore's service model accepts it."""

from __future__ import annotations

import botocore.session
from botocore.validate import ParamValidator

from infra.targets.sagemaker.tensorrt import job_name, processing_job_request

ENTRY = (
    "s3://my-tdk-releases/releases/v1/engines/ab12/cc8.6-tensorrt-release-26.05/40c29dbcf0ec778f/"
)


def test_the_request_is_valid_for_botocore_and_runs_on_the_endpoint_instance_type() -> None:
    name = job_name(ENTRY, "sagemaker-dev")
    request = processing_job_request(
        name, "ml.g5.xlarge", "123456789012.dkr.ecr.us-east-1.amazonaws.com/tensorrt:26.05-py3",
        "arn:aws:iam::123456789012:role/tdk-build", ENTRY, 3600,
    )  # fmt: skip
    model = botocore.session.get_session().get_service_model("sagemaker")
    operation = model.operation_model("CreateProcessingJob")
    report = ParamValidator().validate(request, operation.input_shape)
    assert not report.has_errors(), report.generate_report()
    assert "ml.g5.xlarge" in model.shape_for("ProcessingInstanceType").enum
    assert len(name) <= 63 and name.endswith("-40c29dbcf0ec")
    [source] = request["ProcessingInputs"]
    [sink] = request["ProcessingOutputConfig"]["Outputs"]
    assert source["S3Input"]["S3Uri"] == ENTRY + "input"
    assert sink["S3Output"]["S3Uri"] == ENTRY + "output"
    assert "pod_build.py" in request["AppSpecification"]["ContainerEntrypoint"][-1]

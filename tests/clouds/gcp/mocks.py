"""What pulumi-gcp answers under mocks for the targets on Google Cloud
(tests/infra/pulumi_harness.py reads ``MOCKS``): the project read's number."""

from __future__ import annotations

from tests.infra.pulumi_harness import ProviderMocks

PROJECT_NUMBER = "123456789012"

MOCKS = ProviderMocks(
    reads={
        "gcp:organizations/getProject:getProject": lambda args: {
            "projectId": args.get("projectId"),
            "number": PROJECT_NUMBER,
        }
    }
)

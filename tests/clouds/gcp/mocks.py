"""What pulumi-gcp answers under mocks for the targets on Google Cloud
(tests/infra/pulumi_harness.py reads ``MOCKS``): the project read's number, the caller's
access token."""

from __future__ import annotations

from tests.infra.pulumi_harness import ProviderMocks

PROJECT_NUMBER = "123456789012"

#: the caller's OAuth 2.0 access token (what Artifact Registry takes as a password)
ACCESS_TOKEN = "ya29.mock-access-token"

MOCKS = ProviderMocks(
    reads={
        "gcp:organizations/getProject:getProject": lambda args: {
            "projectId": args.get("projectId"),
            "number": PROJECT_NUMBER,
        },
        "gcp:organizations/getClientConfig:getClientConfig": lambda args: {
            "accessToken": ACCESS_TOKEN, "project": "p", "region": "r", "zone": "z", "id": "c",
        },
    }
)  # fmt: skip

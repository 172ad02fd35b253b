"""boto3 clients for the control-plane commands, and botocore errors as EndpointError.

boto3 is imported lazily, so commands that never reach AWS start fast and need no credentials.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tdk.errors import EndpointError


def aws_client(service: str, region: str | None) -> Any:
    """A boto3 client (``AWS_ENDPOINT_URL[_<SERVICE>]`` redirects it, as boto3 documents)."""
    import boto3

    with aws_errors(f"reach AWS {service}"):
        return boto3.session.Session(region_name=region).client(service)  # type: ignore[call-overload]


@contextmanager
def aws_errors(what: str) -> Iterator[None]:
    """Turn botocore's errors into EndpointError naming ``what`` and the fix."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    try:
        yield
    except NoRegionError:
        raise EndpointError(
            f"cannot {what}: no AWS region", hint="pass --region or set AWS_REGION"
        ) from None
    except NoCredentialsError:
        raise EndpointError(
            f"cannot {what}: no AWS credentials",
            hint="configure credentials (aws configure, AWS_PROFILE or an instance role)",
        ) from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        raise EndpointError(
            f"cannot {what}: {error.get('Code', 'error')}: {error.get('Message', exc)}",
            hint="check the endpoint name, the region and your IAM permissions",
        ) from None
    except BotoCoreError as exc:
        raise EndpointError(f"cannot {what}: {exc}", hint="check the network and region") from None

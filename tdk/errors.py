"""The one exception family of the kit: every error carries a hint that names the fix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class TdkError(Exception):
    """An error a user can act on: ``message`` says what is wrong, ``hint`` how to fix it."""

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class UsageError(TdkError):
    """The command line itself is wrong (bad option, missing path)."""

    exit_code = 2


class ConfigError(TdkError):
    """A ``config.pbtxt`` or a stack config that cannot be read or is invalid."""


class ValidationFailed(TdkError):
    """One or more models broke Triton's rules; ``findings`` lists them."""

    def __init__(self, message: str, findings: Sequence[Any], hint: str = "") -> None:
        super().__init__(message, hint)
        self.findings = list(findings)


class UnsafeInputError(TdkError):
    """Hostile or broken files: links, devices, absolute paths, ``..``."""


class StoreError(TdkError):
    """A store (file://, s3://, gs://, az://) could not be read or written."""


class EndpointError(TdkError):
    """An endpoint (local, SageMaker, Kubernetes) refused or failed a request."""

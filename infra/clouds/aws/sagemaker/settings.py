"""Stack keys both SageMaker targets read alike: the alarm email and the release prefix a
deployment creates its bucket's objects under."""

from __future__ import annotations

from infra.config import PREFIX_RULE, ConfigReader, alert_email, qualify, valid_prefix
from tdk.errors import ConfigError


def alarm_email(reader: ConfigReader) -> str | None:
    """``alertEmail`` (formerly ``sagemakerAlarmEmail``): the SNS topic's address, or None
    for no topic."""
    return alert_email(reader, "sagemakerAlarmEmail")


def created_release_prefix(reader: ConfigReader) -> str:
    """``sagemakerReleasePrefix``: where a created release bucket keeps the release."""
    prefix = reader.string("sagemakerReleasePrefix").strip("/")
    if not prefix or not valid_prefix(prefix):
        raise ConfigError(
            f"{qualify('sagemakerReleasePrefix')} is {prefix!r}: {PREFIX_RULE}, not empty",
            hint="set it to e.g. releases/r2",
        )
    return prefix

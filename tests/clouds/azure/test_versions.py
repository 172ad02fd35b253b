"""The AKS Kubernetes calendar: phases, the default a stack gets, what it refuses, drift."""

from __future__ import annotations

import datetime as dt

import pytest

from infra.clouds.azure import versions

D = dt.date


def test_end_of_life_months_end_on_their_last_day() -> None:
    row = versions.BY_VERSION["1.34"]
    assert row.end_of_life == D(2026, 11, 30)
    assert row.phase(D(2026, 11, 30)) == "supported"
    assert row.phase(D(2026, 12, 1)) == "lts"
    assert row.phase(D(2027, 12, 1)) == "ended"
    assert versions.BY_VERSION["1.30"].end_of_life == D(2025, 8, 22)  # an explicit day


def test_offered_on_the_day_checked() -> None:
    assert versions.offered(D(2026, 11, 27), lts=False) == ("1.34", "1.35", "1.36", "1.37")
    assert "1.33" in versions.offered(D(2026, 11, 27), lts=True)


def test_default_is_the_newest_ga_minor_the_keda_table_covers() -> None:
    today = D(2026, 11, 27)
    assert versions.default(today) == "1.37"
    assert "1.37" not in versions.keda_minors()
    assert versions.default(today, versions.keda_minors()) == "1.36"


def test_default_skips_a_minor_ending_within_60_days() -> None:
    assert versions.default(D(2026, 10, 15), ("1.34", "1.35")) == "1.35"


def test_no_supported_version_left_is_a_config_error_naming_the_source() -> None:
    from tdk.errors import ConfigError

    with pytest.raises(ConfigError, match="supported-kubernetes-versions"):
        versions.default(D(2030, 1, 1))


def test_drift_names_a_ga_version_the_calendar_lacks() -> None:
    answer = {"values": [{"version": "1.36", "isPreview": False},
                         {"version": "1.38", "isPreview": False},
                         {"version": "1.39", "isPreview": True}]}  # fmt: skip
    assert versions.drift(answer) == ["AKS offers 1.38 (GA); the kit's calendar lacks it"]
    assert versions.drift({"values": "nonsense"}) == []

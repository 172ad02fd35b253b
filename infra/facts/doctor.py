"""``tdk doctor``: every fact a stack relies on, its source and age, and what has aged or broken
as of today. Generic over targets: it looks at what the stack's parsed config holds (a
Kubernetes version, a Triton image), never at the target's name."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from infra.facts import CHECKED
from infra.facts import hardware as facts
from infra.facts import kubernetes as kf
from infra.facts import triton as tf
from tdk.errors import TdkError

#: a hand-written table or a price list older than this is reported
MAX_FACT_AGE_DAYS = 90
SUPPORT_MARGIN_DAYS = kf.DEFAULT_MARGIN_DAYS


@dataclass(frozen=True)
class Finding:
    """One fact: what, its value, where from, when checked, and ok / aged / broken."""

    fact: str
    value: str
    source: str
    checked: str
    status: str
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _dated(fact: str, value: str, source: str, checked: dt.date, today: dt.date) -> Finding:
    age = (today - checked).days
    aged = age > MAX_FACT_AGE_DAYS
    note = f"checked {age} days ago" + (f" (over {MAX_FACT_AGE_DAYS}): re-check" if aged else "")
    return Finding(fact, value, source, checked.isoformat(), "aged" if aged else "ok", note)


def _eks(version: str, support: str, today: dt.date) -> list[Finding]:
    row = kf.EKS_BY_VERSION[version]
    left = (row.standard_end - today).days
    phase = row.phase(today)
    status, note = "ok", f"standard support ends {row.standard_end} ({left} days)"
    if phase == "ended":
        status, note = "broken", f"extended support ended {row.extended_end}"
    elif phase == "extended":
        status = "aged" if support == "EXTENDED" else "broken"
        note = (
            f"in extended support until {row.extended_end}: about "
            f"${kf.extended_monthly_extra_usd():.0f} more a month"
        )
    elif left < SUPPORT_MARGIN_DAYS:
        status, note = "aged", f"standard support ends in {left} days ({row.standard_end})"
    src = kf.EKS_VERSIONS_SOURCE
    return [Finding("Kubernetes version", version, src.url, str(src.checked), status, note)]


def _charts(version: str, keda: str | None) -> list[Finding]:
    out = []
    picks = {
        "keda": (keda or kf.keda_for(version).version, kf.KEDA_SOURCE),
        "cluster-autoscaler": (kf.autoscaler_for(version).version, kf.AUTOSCALER_SOURCE),
        "nvidia-device-plugin": (kf.device_plugin_for(version).version, kf.DEVICE_PLUGIN_SOURCE),
    }
    for chart, (pinned, src) in picks.items():
        newest = kf.NEWEST_KNOWN[chart]
        behind = pinned != newest
        note = f"upstream's newest known is {newest}" if behind else "newest known"
        status = "aged" if behind else "ok"
        out.append(Finding(f"{chart} chart", pinned, src.url, str(src.checked), status, note))
    return out


def _image(version: str, today: dt.date) -> Finding:
    months = tf.age_months(version, today)
    old = months > tf.MAX_IMAGE_AGE_MONTHS
    note = f"{months} months old" + (f" (over {tf.MAX_IMAGE_AGE_MONTHS})" if old else "")
    src = tf.TRITON_SOURCE
    return Finding(
        "Triton image", version, src.url, str(src.checked), "aged" if old else "ok", note
    )


def _config_facts(config: Any, today: dt.date) -> list[Finding]:
    found: list[Finding] = []
    version = getattr(config, "kubernetes_version", None)
    if version:
        found += _eks(version, getattr(config, "support_type", "STANDARD"), today)
        found += _charts(version, getattr(config, "keda_version", None))
    image = getattr(config, "triton_version", None) or getattr(
        getattr(config, "workload", None), "image", None
    )
    if image:
        found.append(_image(facts.image_version(image), today))
    ami = getattr(config, "inference_ami_version", None)
    if ami:
        src = tf.AMI_SOURCE
        row = tf.AMI_BY_NAME[ami]
        note = f"driver {row.driver}, CUDA {row.cuda[0]}.{row.cuda[1]}"
        found.append(Finding("InferenceAmiVersion", ami, src.url, str(src.checked), "ok", note))
    return found


def diagnose(project_dir: Path, stack: str, today: dt.date) -> list[Finding]:
    """Every finding for ``stack``; a config the kit refuses is one ``broken`` finding."""
    from infra.perf.prices import load_prices
    from infra.targets import registry

    prices = load_prices()
    found = [
        _dated("fact tables", "infra/facts", "see each table's source", CHECKED, today),
        _dated(
            "list prices", str(prices.origin), "infra/perf/prices.json sources",
            dt.date.fromisoformat(prices.date), today,
        ),
        Finding(
            "botocore name rules and enums", "infra/facts/aws_generated.json",
            json.loads((Path(__file__).with_name("aws_generated.json")).read_text())["source"],
            "generated", "ok", "a test fails on drift",
        ),
    ]  # fmt: skip
    try:
        config = registry.load_stack(project_dir, stack).config
    except TdkError as exc:
        found.append(
            Finding("stack config", stack, "", "", "broken", f"{exc.message} ({exc.hint})")
        )
        return found
    return found + _config_facts(config, today)

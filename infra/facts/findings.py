"""One fact ``tdk doctor`` reports (``Finding``) and the helpers a target's doctor port
(``Target.doctor.facts``) builds its own from: the Kubernetes add-on charts against a cluster
version, the Triton image against its age limit."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import Any

from infra.facts import hardware as facts
from infra.facts import kubernetes as kf
from infra.facts import triton as tf

#: a hand-written table or a price list older than this is reported
MAX_FACT_AGE_DAYS = 90
#: a fact only the kit's own table says (nothing installed or online compared it): never "ok"
UNVERIFIED = "unverified"
HAND = "; the kit's calendar, compared with the cloud only by `tdk doctor --online`"


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


def dated(fact: str, value: str, source: str, checked: dt.date, today: dt.date) -> Finding:
    """A table or list checked on ``checked``: aged past ``MAX_FACT_AGE_DAYS``."""
    age = (today - checked).days
    aged = age > MAX_FACT_AGE_DAYS
    note = f"checked {age} days ago" + (f" (over {MAX_FACT_AGE_DAYS}): re-check" if aged else "")
    return Finding(fact, value, source, checked.isoformat(), "aged" if aged else "ok", note)


def chart_findings(version: str, keda: str | None) -> list[Finding]:
    """Each add-on chart the cluster gets, against the Kubernetes minors it is tested with."""
    out = []
    minor = kf.minor(version)
    picks = {
        "keda": (kf.keda_pin(keda) if keda else None) or kf.keda_for(version),
        "cluster-autoscaler": kf.autoscaler_for(version),
        "nvidia-device-plugin": kf.device_plugin_for(version),
    }
    sources = {"keda": kf.KEDA_SOURCE, "cluster-autoscaler": kf.AUTOSCALER_SOURCE,
               "nvidia-device-plugin": kf.DEVICE_PLUGIN_SOURCE}  # fmt: skip
    for chart, row in picks.items():
        src = sources[chart]
        tested = f"tested with Kubernetes 1.{row.low}-1.{row.high}"
        status, note = UNVERIFIED, f"{tested}; the cluster runs {version} (the kit's table)"
        if not row.supports(minor):
            status, note = "broken", f"{tested}, not the cluster's {version}"
        out.append(Finding(f"{chart} chart", row.version, src.url, str(src.checked), status, note))
    return out


def image_finding(image: str, today: dt.date) -> Finding:
    """The Triton image (an NGC tag or a release) against the kit's age limit."""
    version = facts.image_version(image)
    months = tf.age_months(version, today)
    old = months > tf.MAX_IMAGE_AGE_MONTHS
    note = f"{months} months old" + (f" (over {tf.MAX_IMAGE_AGE_MONTHS})" if old else "")
    src = tf.TRITON_SOURCE
    return Finding(
        "Triton image", version, src.url, str(src.checked), "aged" if old else "ok", note
    )


def image_engine_finding(version: str) -> Finding:
    """What a TensorRT engine for the image needs (its TensorRT, minimum driver, base release):
    a fact no source checked gives is aged, naming that source (validate cannot check engines
    against it); the rest unverified (the kit's table)."""
    row = facts.IMAGES[version]
    texts = [row.tensorrt_text(), row.driver_text(), row.base_text()]
    missing = row.tensorrt is None or row.driver is None or not row.base_verified
    return Finding(f"Triton {version} TensorRT / driver / base", version, row.source,
                   row.checked, "aged" if missing else UNVERIFIED, " | ".join(texts))  # fmt: skip


def image_findings(image: str, today: dt.date) -> list[Finding]:
    """The image's age and, for a release in the facts, what its engines depend on."""
    version = facts.image_version(image)
    engine = [image_engine_finding(version)] if version in facts.IMAGES else []
    return [image_finding(image, today), *engine]

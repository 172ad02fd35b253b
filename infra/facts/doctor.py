"""``tdk doctor``: every fact a stack relies on, its source and age, and what has aged or broken
as of today. Generic over targets: a stack's own facts (its Kubernetes calendar, its image, its
AMI) are its target's (``Target.doctor``'s ``facts``, built from the helpers here), never picked by
the target's name or the config's attribute names (``infra.facts.findings``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.facts import CHECKED, INFRA_EXTRA_INSTALL
from infra.facts import hardware as facts
from infra.facts import triton as tf
from infra.facts.findings import UNVERIFIED, Finding, dated
from tdk.errors import TdkError

if TYPE_CHECKING:
    from infra.facts.machine import Cloud
    from infra.planning.pricing import PriceTable

__all__ = ["DoctorNeeds", "Finding", "diagnose"]


@dataclass(frozen=True)
class DoctorNeeds:
    """What ``diagnose`` needs from the layers above it: the registered targets' clouds, the
    kit's price tables and the stack read path (``load(project_dir, stack)`` returns the stack's
    settings: its ``entry`` and typed ``config``, or raises ``TdkError``)."""

    clouds: Sequence[Cloud]
    prices: PriceTable
    load: Callable[[Path, str], Any]


def sagemaker_image_findings() -> list[Finding]:
    """The installed sagemaker-core's Triton image list against the kit's image facts: the
    newest (what the stacks deploy) without facts is broken (validate refuses it), an older
    one aged."""
    src = tf.TRITON_SOURCE
    try:
        listed = tf.sagemaker_image_versions()
    except TdkError as exc:
        return [Finding("sagemaker-core Triton images", "not installed", src.url,
                        str(src.checked), "broken", exc.message)]  # fmt: skip
    missing = [v for v in listed if v not in facts.IMAGES]
    status, note = "ok", f"all {len(listed)} have Triton/CUDA facts; stacks deploy {listed[-1]}"
    if missing:
        status = "broken" if listed[-1] in missing else "aged"
        note = (
            f"no facts for {', '.join(missing)} (stacks deploy {listed[-1]}): add their "
            "rows to infra/facts/hardware.py from the release notes"
        )
    return [Finding("sagemaker-core Triton images", ", ".join(listed), src.url,
                    str(src.checked), status, note)]  # fmt: skip


def newer_release_findings() -> list[Finding]:
    """NVIDIA's published releases (the image facts) against the default every target deploys
    (the newest the installed sagemaker-core lists): newer ones are reported, never adopted
    silently, so a release validated once behaves the same on every target."""
    src = tf.TRITON_SOURCE
    try:
        default = tf.default_sagemaker_triton_version()
    except TdkError as exc:
        return [Finding("newer Triton releases", "unknown", src.url, str(src.checked),
                        "broken", exc.message)]  # fmt: skip
    newer = sorted((v for v in facts.IMAGES if tf.released(v) > tf.released(default)),
                   key=tf.released)  # fmt: skip
    if not newer:
        note = f"the default {default} is NVIDIA's newest release in the facts"
        return [Finding("newer Triton releases", "none", src.url, str(src.checked), "ok", note)]
    row = facts.IMAGES[newer[-1]]
    note = (
        f"NVIDIA published {', '.join(newer)} after the default {default} (the newest the "
        "installed sagemaker-core lists, deployed on every target): a Kubernetes stack may pin "
        f"one (k8sTritonImage {tf.NGC_REPOSITORY}:{newer[-1]}-py3); a sagemaker-tritonserver "
        "image exists once sagemaker-core lists it (upgrade sagemaker-core)"
    )
    return [Finding("newer Triton releases", ", ".join(newer), row.source, row.checked,
                    "aged", note)]  # fmt: skip


def _stack_keys(project_dir: Path, stack: str) -> Finding:
    """Keys of the stack file that Pulumi.yaml does not declare (ignored: defaults apply)."""
    from infra.stack_keys import deprecated_in_file, stack_file_keys, undeclared

    try:
        warnings = undeclared(project_dir, stack_file_keys(project_dir, stack))
        deprecated = deprecated_in_file(project_dir, stack)
    except TdkError as exc:
        return Finding("stack keys", "unreadable", "Pulumi.yaml", "", "broken", exc.message)
    if not warnings and not deprecated:
        return Finding("stack keys", "all declared", "Pulumi.yaml", "", "ok",
                       "every key of the stack file is declared in Pulumi.yaml")  # fmt: skip
    counts = [f"{len(warnings)} undeclared"] * bool(warnings)
    counts += [f"{len(deprecated)} deprecated"] * bool(deprecated)
    return Finding("stack keys", ", ".join(counts), "Pulumi.yaml", "", "aged",
                   " | ".join([*warnings, *deprecated]))  # fmt: skip


def schema_findings(settings: Any) -> list[Finding]:
    """The stack's facts against the installed Pulumi providers' schemas (its target reads
    them; no target name here): a kit value the schema does not accept is broken (``pulumi
    up`` would fail), a schema value the kit neither uses nor refuses is aged."""
    try:
        drifts = settings.entry.deploy().doctor.schema_drift(settings.config)
    except ImportError as exc:
        return [Finding("provider schema", "not installed", "", "installed", UNVERIFIED,
                        f"{exc}: {INFRA_EXTRA_INSTALL}")]  # fmt: skip
    out = []
    for drift in drifts:
        value, status = "agrees", "ok"
        note = "the installed provider's schema accepts the kit's values"
        if drift.refused or drift.unknown:
            value = f"{len(drift.refused)} refused, {len(drift.unknown)} unknown to tdk"
            status = "broken" if drift.refused else "aged"
            note = " | ".join([*drift.refused, *drift.unknown])
        out.append(Finding(f"provider schema ({drift.source})", value, drift.source,
                           "installed", status, note))  # fmt: skip
    return out


def online_findings(settings: Any, today: dt.date) -> list[Finding]:
    """What the stack's cloud answers about the kit's facts (its target asks; no target name
    here): drift is aged, no answer (credentials, network) is unverified, never ok."""
    try:
        asked = settings.entry.deploy().doctor.online_drift(settings.config)
    except Exception as exc:
        return [Finding("cloud facts", "no answer", "", "online", UNVERIFIED,
                        f"{type(exc).__name__}: {exc}")]  # fmt: skip
    if asked is None:
        return []
    api, drift = asked
    if drift:
        return [Finding(f"cloud facts ({api})", f"{len(drift)} differences", api,
                        today.isoformat(), "aged", " | ".join(drift))]  # fmt: skip
    return [Finding(f"cloud facts ({api})", "agree", api, today.isoformat(), "ok",
                    "the cloud's answer matches the kit's facts")]  # fmt: skip


def cloud_findings(clouds: Iterable[Cloud]) -> list[Finding]:
    """Each cloud's catalog against what its installed SDK lists (a cloud shared by several
    targets once; ``Cloud.catalog_facts``)."""
    unique = {id(cloud): cloud for cloud in clouds}
    return [f for cloud in unique.values() if cloud.catalog_facts for f in cloud.catalog_facts()]


def diagnose(
    project_dir: Path,
    stack: str,
    today: dt.date,
    needs: DoctorNeeds,
    online: bool = False,
) -> list[Finding]:
    """Every finding for ``stack``; a config the kit refuses is one ``broken`` finding. What the
    registered targets know comes in ``needs`` (``infra.targets.doctor`` gathers it), so this
    layer never asks the registry."""
    prices = needs.prices
    found = [
        dated("fact tables", "infra/facts", "see each table's source", CHECKED, today),
        *cloud_findings(needs.clouds),
        *sagemaker_image_findings(),
        *newer_release_findings(),
        dated(
            "list prices", str(prices.origin), "each cloud's prices.json sources",
            dt.date.fromisoformat(prices.date), today,
        ),
    ]  # fmt: skip
    found.append(_stack_keys(project_dir, stack))
    try:
        settings = needs.load(project_dir, stack)
        config = settings.config
    except TdkError as exc:
        found.append(
            Finding("stack config", stack, "", "", "broken", f"{exc.message} ({exc.hint})")
        )
        return found
    own = settings.entry.deploy().doctor.facts(config, today)
    schemas = schema_findings(settings)
    return found + own + schemas + (online_findings(settings, today) if online else [])

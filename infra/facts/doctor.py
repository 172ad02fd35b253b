"""``tdk doctor``: every fact a stack relies on, its source and age, and what has aged or broken
as of today. Generic over targets: it looks at what the stack's parsed config holds (a
Kubernetes version, a Triton image), never at the target's name."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from infra.facts import CHECKED, INFRA_EXTRA_INSTALL
from infra.facts import hardware as facts
from infra.facts import kubernetes as kf
from infra.facts import triton as tf
from infra.facts.aws import GENERATED
from tdk.errors import TdkError

#: a hand-written table or a price list older than this is reported
MAX_FACT_AGE_DAYS = 90
#: a fact only the kit's own table says (nothing installed or online compared it): never "ok"
UNVERIFIED = "unverified"
HAND = "; the kit's calendar, compared with the cloud only by `tdk doctor --online`"
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
    status, note = UNVERIFIED, f"standard support ends {row.standard_end} ({left} days){HAND}"
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


def _channel(channel: str) -> Finding:
    """The KEDA chart a GKE release channel gets, against the minors the channel offers."""
    low, high = kf.GKE_CHANNELS[channel]
    row = kf.keda_for_channel(channel)
    status, note = (
        UNVERIFIED,
        f"{channel} offers 1.{low}-1.{high}; the chart is tested with 1.{row.low}-1.{row.high} "
        "(the kit's tables)",
    )
    if high > row.high:
        status = "aged"
        note += f": clusters upgraded to 1.{high} run KEDA untested; add a newer chart"
    src = kf.GKE_CHANNELS_SOURCE
    return Finding("keda chart (release channel)", row.version, src.url, str(src.checked),
                   status, note)  # fmt: skip


def _image(version: str, today: dt.date) -> Finding:
    months = tf.age_months(version, today)
    old = months > tf.MAX_IMAGE_AGE_MONTHS
    note = f"{months} months old" + (f" (over {tf.MAX_IMAGE_AGE_MONTHS})" if old else "")
    src = tf.TRITON_SOURCE
    return Finding(
        "Triton image", version, src.url, str(src.checked), "aged" if old else "ok", note
    )


def _image_plan_facts(version: str) -> Finding:
    """What a TensorRT plan for the image needs (its TensorRT, minimum driver, base release):
    a fact the sources checked do not give is aged (validate cannot check plans against it),
    the rest unverified (the kit's table)."""
    row = facts.IMAGES[version]
    texts = [row.tensorrt_text(), row.driver_text(), row.base_text()]
    missing = row.tensorrt is None or row.driver is None or not row.base_verified
    return Finding(f"Triton {version} TensorRT / driver / base", version, row.source,
                   row.checked, "aged" if missing else UNVERIFIED, " | ".join(texts))  # fmt: skip


def _config_facts(config: Any, today: dt.date) -> list[Finding]:
    found: list[Finding] = []
    version = getattr(config, "kubernetes_version", None)
    if version:
        found += _eks(version, getattr(config, "support_type", "STANDARD"), today)
        found += _charts(version, getattr(config, "keda_version", None))
    channel = getattr(config, "release_channel", None)
    if channel:
        found.append(_channel(channel))
    image = getattr(config, "triton_version", None) or getattr(
        getattr(config, "workload", None), "image", None
    )
    if image:
        found.append(_image(facts.image_version(image), today))
        if facts.image_version(image) in facts.IMAGES:
            found.append(_image_plan_facts(facts.image_version(image)))
    ami = getattr(config, "inference_ami_version", None)
    if ami:
        src = tf.AMI_SOURCE
        row = tf.AMI_BY_NAME[ami]
        note = f"driver {row.driver}, CUDA {row.cuda[0]}.{row.cuda[1]} (the kit's table)"
        found.append(
            Finding("InferenceAmiVersion", ami, src.url, str(src.checked), UNVERIFIED, note)
        )
    return found


def _generated_enums() -> tuple[str, dict[str, list[str]]]:
    """(botocore version, enums) as the installed botocore gives them (indirection for tests)."""
    from infra.facts import generate

    built = generate.build()
    return str(built["source"]), dict(built["enums"])


def _generated_families() -> dict[str, list[str]]:
    """The GPU families the installed botocore lists (indirection for tests)."""
    from infra.facts import generate

    return dict(generate.build()["gpu_families"])


def _gpu_family_finding(source: str) -> Finding:
    """A GPU family botocore lists that the kit neither describes nor refuses with a reason
    (it would be refused as unknown, and nobody said why)."""
    known = set(facts.EC2_GPU_FAMILIES) | set(facts.UNSUPPORTED_GPU_FAMILIES)
    listed = {f for families in _generated_families().values() for f in families}
    unknown = sorted(listed - known)
    note = f"all {len(listed)} are in infra/facts/hardware.py (described or refused, with why)"
    if unknown:
        note = (
            f"botocore lists {', '.join(unknown)}, which the kit neither describes nor refuses: "
            "add them to EC2_GPU_FAMILIES or UNSUPPORTED_GPU_FAMILIES in infra/facts/hardware.py"
        )
    return Finding("GPU instance families", f"{len(listed)} families", source, "installed",
                   "aged" if unknown else "ok", note)  # fmt: skip


def botocore_findings() -> list[Finding]:
    """The installed botocore's enums against the kit's tables: the generated file, the GPU
    instance sizes and the InferenceAmiVersions (a size or AMI botocore lists that the kit
    lacks is refused by the kit although AWS takes it)."""
    try:
        source, enums = _generated_enums()
    except ImportError as exc:
        return [Finding("botocore enums", "not installed", "", "", "broken", str(exc))]
    committed = json.loads(GENERATED.read_text())["enums"]
    out = []
    for shape, values in sorted(enums.items()):
        new, gone = (
            sorted(set(values) - set(committed.get(shape, []))),
            sorted(set(committed.get(shape, [])) - set(values)),
        )
        status, note = "ok", "aws_generated.json matches the installed botocore"
        if new or gone:
            status = "aged"
            note = (
                f"botocore adds {new or 'nothing'}, drops {gone or 'nothing'}: run "
                "`python -m infra.facts.generate`"
            )
        out.append(Finding(f"botocore enum {shape}", f"{len(values)} values", source,
                           "installed", status, note))  # fmt: skip
    types = enums.get("sagemaker.ProductionVariantInstanceType", [])
    missing = [
        t for family, row in facts.EC2_GPU_FAMILIES.items() for t in types
        if t.startswith(f"ml.{family}.") and t.removeprefix(f"ml.{family}.") not in row.gpus
    ]  # fmt: skip
    note = "every size of the kit's GPU families is in its table"
    if missing:
        note = (
            f"botocore lists {', '.join(missing)}, which the kit refuses: add them to "
            "infra/facts/hardware.py"
        )
    out.append(Finding("GPU instance sizes", f"{len(facts.EC2_GPU_FAMILIES)} families",
                       source, "installed", "aged" if missing else "ok", note))  # fmt: skip
    out.append(_gpu_family_finding(source))
    amis = {a for a in enums.get("sagemaker.ProductionVariantInferenceAmiVersion", [])
            if "-gpu-" in a}  # fmt: skip
    unknown = sorted(amis - set(tf.AMI_BY_NAME))
    note = f"add {', '.join(unknown)} to INFERENCE_AMIS" if unknown else "all known"
    out.append(Finding("GPU InferenceAmiVersions", f"{len(amis)}", source, "installed",
                       "aged" if unknown else "ok", note))  # fmt: skip
    return out


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
        drifts = settings.entry.deploy().schema_drift(settings.config)
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
        asked = settings.entry.deploy().online_drift(settings.config)
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


def diagnose(project_dir: Path, stack: str, today: dt.date, online: bool = False) -> list[Finding]:
    """Every finding for ``stack``; a config the kit refuses is one ``broken`` finding."""
    from infra.perf.prices import load_prices
    from infra.targets import registry

    prices = load_prices()
    found = [
        _dated("fact tables", "infra/facts", "see each table's source", CHECKED, today),
        *botocore_findings(),
        *sagemaker_image_findings(),
        *newer_release_findings(),
        _dated(
            "list prices", str(prices.origin), "infra/perf/prices.json sources",
            dt.date.fromisoformat(prices.date), today,
        ),
    ]  # fmt: skip
    found.append(_stack_keys(project_dir, stack))
    try:
        settings = registry.load_stack(project_dir, stack)
        config = settings.config
    except TdkError as exc:
        found.append(
            Finding("stack config", stack, "", "", "broken", f"{exc.message} ({exc.hint})")
        )
        return found
    return (
        found
        + _config_facts(config, today)
        + schema_findings(settings)
        + (online_findings(settings, today) if online else [])
    )

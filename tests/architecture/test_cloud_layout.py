"""Every cloud folder (``infra/clouds/<cloud>/``) holds the same kinds of file, so a newcomer
finds AWS's catalog where Azure's is (issue 50 item 1): each kind is a module name, and a cloud
without one says why, as data. A file that is no kind is the cloud's own, also with a reason. No
target folder holds a cloud's kind, and the layers below the clouds hold no cloud's table."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLOUDS = ROOT / "infra" / "clouds"

#: kind -> the files that hold it in every cloud folder
KINDS: dict[str, tuple[str, ...]] = {
    "machines and GPUs (instance types or VM sizes, their GPUs and limits)": ("catalog.py",),
    "the rules of the names derived from a stack's name": ("names.py",),
    "prices, their reader and their fetcher": ("prices.json", "prices.py", "fetch_prices.py"),
    "this machine's sign-in and identity (the Cloud tdk doctor checks)": ("machine.py",),
    "what a serving unit offers a model (TargetSpec)": ("offer.py",),
    "the managed Kubernetes calendar": ("versions.py",),
    "how a workload gets the cloud's identity (trust, annotations, roles), without Pulumi": (
        "identity.py",
    ),
    "catalog data generated from an SDK's service models, with its generator": (
        "generate.py",
        "generated.json",
        "generated.py",
    ),
    "doctor facts of the catalog against the installed SDK": ("doctor.py",),
    "the guardrails of every stack on the cloud (its monthly budget)": ("guardrails.py",),
}

#: (cloud, file) -> why that cloud lacks it
MISSING: dict[tuple[str, str], str] = {
    **{
        (cloud, name): "no installed SDK ships this cloud's catalog as data; catalog.py is "
        "hand-written with sources"
        for cloud in ("gcp", "azure")
        for name in ("generate.py", "generated.json", "generated.py")
    },
    **{
        (cloud, "doctor.py"): "no installed SDK lists this cloud's machines to check catalog.py "
        "against (its calendar's online check is versions.py's drift)"
        for cloud in ("gcp", "azure")
    },
}

#: (cloud, file or folder) -> why it is the cloud's own and no kind
OWN: dict[tuple[str, str], str] = {
    ("aws", "arn.py"): "ARNs, which the SageMaker and eks targets build alike",
    ("aws", "sagemaker"): "what both SageMaker targets and the local front share",
    ("azure", "workload_identity.py"): "the Pulumi component of a managed identity, its "
    "federated credential and roles (apart from identity.py: pure builders read that one)",
}


#: the kinds only a cloud holds: a target folder with one of these holds its cloud's facts
#: (``doctor.py``, ``names.py`` and ``generate.py`` mean the target's own there: its doctor
#: findings, the names of its resources, what it generates)
CLOUD_ONLY = frozenset(
    name
    for names in KINDS.values()
    for name in names
    if name not in ("doctor.py", "names.py", "generate.py")
)
TARGETS = ROOT / "infra" / "targets"
#: a cloud's facts that the layers below the clouds must not hold again (issue 50: the EKS
#: calendar, GKE's channels and SageMaker's AMIs once lived in infra/facts)
CLOUD_TABLES = ("EKS_VERSIONS", "GKE_CHANNELS", "INFERENCE_AMIS")


def clouds() -> list[str]:
    return sorted(p.name for p in CLOUDS.iterdir() if (p / "__init__.py").is_file())


def files(cloud: str) -> set[str]:
    return {
        p.name
        for p in (CLOUDS / cloud).iterdir()
        if p.name != "__init__.py" and not p.name.startswith((".", "__"))
    }


def test_there_are_three_clouds() -> None:
    assert clouds() == ["aws", "azure", "gcp"]


def test_every_cloud_has_every_kind_or_says_why_not() -> None:
    for cloud in clouds():
        held = files(cloud)
        for kind, names in KINDS.items():
            for name in names:
                if (cloud, name) in MISSING:
                    assert name not in held, f"{cloud}/{name} exists: drop its MISSING row"
                else:
                    assert name in held, f"infra/clouds/{cloud} lacks {name} ({kind})"


def test_every_file_of_a_cloud_is_a_kind_or_its_own() -> None:
    kinds = {name for names in KINDS.values() for name in names}
    for cloud in clouds():
        other = {n for n in files(cloud) if n not in kinds and (cloud, n) not in OWN}
        assert not other, (
            f"infra/clouds/{cloud}: {sorted(other)} is no kind: add it to KINDS or OWN"
        )
    assert {cloud for cloud, _ in [*MISSING, *OWN]} <= set(clouds())
    for cloud, name in OWN:
        assert name in files(cloud), f"OWN names {cloud}/{name}, which does not exist"


def test_no_target_folder_holds_a_cloud_kind() -> None:
    for folder in sorted(p for p in TARGETS.iterdir() if (p / "__init__.py").is_file()):
        held = sorted(CLOUD_ONLY & {p.name for p in folder.iterdir()})
        assert not held, (
            f"infra/targets/{folder.name} holds {held}: a cloud's kind of file belongs in "
            "infra/clouds/<cloud>/ (the target imports it from there)"
        )


def test_the_layers_below_the_clouds_hold_no_cloud_table() -> None:
    for layer in ("facts", "values"):
        for path in sorted((ROOT / "infra" / layer).glob("*.py")):
            text = path.read_text()
            found = [t for t in CLOUD_TABLES if t in text]
            assert not found, f"infra/{layer}/{path.name} holds {found}: move it to its cloud"

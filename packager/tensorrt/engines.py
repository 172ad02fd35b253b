"""TensorRT engines: what an engine was built for, and the engine cache in a release store.

An engine (serialized: what TensorRT and Triton call a plan file) loads only with the TensorRT
version that built it, on GPUs of the compute capability it was built on (unless it was built
hardware-compatible, ``ampere+``: any compute capability 8.0 or later, at a performance cost).
``BuiltFor`` records both, plus the release (``yy.mm``) of the TensorRT container that built
it: NVIDIA builds Triton's own test engines with ``nvcr.io/nvidia/tensorrt:<Triton
release>-py3`` (triton-inference-server/server ``qa/common/gen_qa_model_repository``, checked
2026-11-27), so an engine built in the container of a Triton image's release matches that
image's TensorRT.

The cache: ``engines/<onnx sha256>/<target>/<profile+precision digest>/`` under a release root
holds ``model.plan``, ``plan.json`` (an ``EngineRecord``) and ``plan.sig``, the record's
endorsement (``packager.tensorrt.trust``), written last. ``model.plan`` is the file name Triton's
tensorrt backend loads by default, so it stays; the record and endorsement keep the names of
the earlier layout, ``plans/`` (tdk before 2026-12-07), whose entries are still read, never
written. The same (ONNX sha256, TensorRT, compute capability, profile, precision) key is built
once; a record without a valid endorsement is never served.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from packager.stores.base import Store
from packager.tensorrt.trust import KEY_ENV, SIGNATURE_FILE, endorse, endorsed
from tdk.bounded import DocumentError, parse_json
from tdk.errors import StoreError, TdkError, UsageError

#: the engine cache under a release root: the one prefix tdk writes, and a build identity's grant
ENGINES_PREFIX = "engines/"
#: the cache's earlier layout: read (after ``ENGINES_PREFIX``), never written
LEGACY_PREFIX = "plans/"
#: every prefix the cache is read from, newest first: a writer's grant covers them all
CACHE_PREFIXES = (ENGINES_PREFIX, LEGACY_PREFIX)
#: the file name Triton loads a TensorRT model from unless the config says another
#: (``default_model_filename``): triton-inference-server/server docs/user_guide/
#: model_repository.md, "TensorRT Models", checked 2026-12-07; kept, as TensorRT calls it a plan
ENGINE_FILE = "model.plan"
RECORD_FILE = "plan.json"
#: where a builder that cannot set tdk's checksum metadata (a SageMaker Processing job) leaves
#: the engine and its record inside the entry, for ``adopt_output`` to check and cache
OUTPUT_DIR = "output/"
#: TensorRT's hardware-compatibility levels tdk builds with (trtexec
#: ``--hardwareCompatibilityLevel``): "" none (the build GPU's compute capability only)
HARDWARE_LEVELS = ("", "ampere+")
AMPERE = (8, 0)
_BUILT_FOR = re.compile(r"^(?:(\d+)\.(\d+)|(ampere\+)):(\d+)\.(\d+)(?:@(\d\d\.\d\d))?$")
BUILT_FOR_HINT = (
    "e.g. --trt-built-for 8.6:10.13 (compute capability 8.6, TensorRT 10.13); add @26.05 for "
    "the TensorRT container release that built it, or use ampere+ for a hardware-compatible engine"
)


@dataclass(frozen=True)
class BuiltFor:
    """What an engine runs on: a compute capability (or ``ampere+``), a TensorRT major.minor, and
    the release of the TensorRT container that built it ("" when not known)."""

    compute: tuple[int, int]
    tensorrt: tuple[int, int]
    release: str = ""
    hardware: str = ""  # one of HARDWARE_LEVELS

    @classmethod
    def parse(cls, value: str) -> BuiltFor:
        """``8.6:10.13``, ``8.6:10.13@26.05`` or ``ampere+:10.13`` (the --trt-built-for form)."""
        match = _BUILT_FOR.match(value.strip())
        if not match:
            raise UsageError(
                f"--trt-built-for {value!r} is not <compute capability>:<TensorRT version>",
                hint=BUILT_FOR_HINT,
            )
        major, minor, hardware, trt_major, trt_minor, release = match.groups()
        compute = AMPERE if hardware else (int(major), int(minor))
        return cls(compute, (int(trt_major), int(trt_minor)), release or "", hardware or "")

    def __str__(self) -> str:
        where = self.hardware or f"{self.compute[0]}.{self.compute[1]}"
        text = f"{where}:{self.tensorrt[0]}.{self.tensorrt[1]}"
        return f"{text}@{self.release}" if self.release else text

    def runs_on(self, compute: tuple[int, int]) -> bool:
        """Whether a GPU of ``compute`` capability can deserialize the engine."""
        if self.hardware == "ampere+":
            return compute >= AMPERE
        return compute == self.compute


def tensorrt_version(text: str) -> tuple[int, int]:
    """``"10.13.3.9"`` -> (10, 13); a TdkError for anything else."""
    match = re.match(r"^(\d+)\.(\d+)", text.strip())
    if not match:
        raise TdkError(f"{text!r} is not a TensorRT version", hint="expected e.g. 10.13.3")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class EngineKey:
    """What makes two engines the same: the ONNX bytes, where it runs, how it was built.

    ``tensorrt`` is the TensorRT the engine is built with, as the target knows it: a version
    (``10.13``) or, where the image's TensorRT is not in tdk's facts, the container release
    (``release-26.05``) whose TensorRT equals the Triton image's.
    """

    onnx_sha256: str
    tensorrt: str
    compute: str  # "8.6", or "ampere+" for a hardware-compatible engine
    profile: str  # the trtexec shape arguments, canonical (``Profile.describe``)
    precision: str  # "fp32" or "fp16"

    @property
    def target(self) -> str:
        return f"cc{self.compute}-tensorrt-{self.tensorrt}"

    @property
    def build_digest(self) -> str:
        text = json.dumps({"profile": self.profile, "precision": self.precision}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def prefix(self) -> str:
        """The key's directory in the store, ``engines/<sha>/<target>/<digest>/``."""
        return self.entry_under(ENGINES_PREFIX)

    def entry_under(self, root: str) -> str:
        """The key's directory under ``root``, one of ``CACHE_PREFIXES``."""
        return f"{root}{self.onnx_sha256}/{self.target}/{self.build_digest}/"


@dataclass(frozen=True)
class Parity:
    """The engine's outputs against ONNX Runtime's on the same inputs."""

    max_abs: float
    max_rel: float
    atol: float
    rtol: float
    passed: bool


@dataclass(frozen=True)
class EngineRecord:
    """``plan.json``: the key, what the engine was built for, its sha256 and its parity."""

    key: EngineKey
    built_for: str  # BuiltFor's text form
    plan_sha256: str  # the engine's sha256; the name is plan.json's field, stored as written
    parity: Parity
    tensorrt_full: str = ""  # the builder's full version, e.g. "10.13.3.9"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes, source: str) -> EngineRecord:
        try:
            payload = parse_json(text, source, "")
            return cls(
                key=EngineKey(**payload["key"]),
                built_for=str(BuiltFor.parse(payload["built_for"])),
                plan_sha256=str(payload["plan_sha256"]),
                parity=Parity(**payload["parity"]),
                tensorrt_full=str(payload.get("tensorrt_full", "")),
                extra=dict(payload.get("extra", {})),
            )
        except (ValueError, KeyError, TypeError, UsageError, DocumentError) as exc:
            raise TdkError(
                f"{source}: not a tdk engine record ({exc.__class__.__name__}: {exc})",
                hint="delete that engine directory; `tdk build` writes it again",
            ) from exc


def cached(store: Store, key: EngineKey) -> EngineRecord | None:
    """The record of ``key``'s engine in ``store`` when the engine is there whole and its record
    endorsed (``packager.tensorrt.trust``), else None: anything else is built again."""
    for entry in (key.entry_under(root) for root in CACHE_PREFIXES):
        if store.sha256_of(entry + RECORD_FILE) is not None:
            return _whole(store, key, entry)
    return None


def _whole(store: Store, key: EngineKey, entry: str) -> EngineRecord | None:
    raw = store.get_bytes(entry + RECORD_FILE)
    record = EngineRecord.from_json(raw, store.describe(entry + RECORD_FILE))
    if record.key != key or store.sha256_of(entry + ENGINE_FILE) != record.plan_sha256:
        return None  # a damaged or foreign entry: built again
    return record if endorsed(store, entry, raw) else None


def store_engine(store: Store, record: EngineRecord, plan: bytes) -> None:
    """Write ``engine``, then its record, then the record's endorsement (no endorsement, no
    cache entry), after checking the engine's sha256 and its parity."""
    if hashlib.sha256(plan).hexdigest() != record.plan_sha256:
        raise TdkError("the engine's bytes do not match its record's sha256", hint="build again")
    if not record.parity.passed:
        raise TdkError(
            f"refusing to cache an engine outside the parity tolerance (max abs "
            f"{record.parity.max_abs:.3g}, max rel {record.parity.max_rel:.3g})",
            hint="rebuild without --fp16, or loosen --atol/--rtol if the error is acceptable",
        )
    raw = record.to_json().encode()
    store.put_bytes(record.key.prefix + ENGINE_FILE, plan)
    store.put_bytes(record.key.prefix + RECORD_FILE, raw, "application/json")
    endorse(store, record.key.prefix, raw)  # last: checked here, so vouched for


def adopt_output(store: Store, key: EngineKey) -> EngineRecord:
    """Cache the engine a builder left in ``<entry>output/``: its record must name ``key`` and
    the engine's sha256, and pass parity; a TdkError says which did not."""
    where = store.describe(key.prefix + OUTPUT_DIR)
    record = EngineRecord.from_json(
        store.get_bytes(key.prefix + OUTPUT_DIR + RECORD_FILE), where + RECORD_FILE
    )
    if record.key != key:
        raise TdkError(
            f"{where}{RECORD_FILE} is the record of another build",
            hint="run tdk build again; the output of another key is never adopted",
        )
    plan = store.get_bytes(key.prefix + OUTPUT_DIR + ENGINE_FILE)
    store_engine(store, record, plan)  # checks the sha256 and the parity
    return record


def engines_for(store: Store, onnx_sha256: str, target: str) -> list[EngineRecord]:
    """Every cached engine of the ONNX model ``onnx_sha256`` for ``target`` (``EngineKey.target``).

    Each must be what ``tdk build`` checked: a record whose key is that ONNX sha256, that target
    and the entry it lies in, endorsed, naming the engine beside it; anything else is refused (a
    writer of the cache may have planted it), never served. An entry of the earlier layout
    (``LEGACY_PREFIX``) whose key is also under ``ENGINES_PREFIX`` is the same engine: said
    once."""
    found: dict[EngineKey, EngineRecord] = {}
    for root in CACHE_PREFIXES:
        prefix = f"{root}{onnx_sha256}/{target}/"
        try:
            keys = [k for k in store.list_keys(prefix) if k.endswith("/" + RECORD_FILE)]
        except StoreError:
            continue
        for record_key in sorted(keys):
            record = _served(store, record_key, onnx_sha256, target, root)
            found.setdefault(record.key, record)
    return list(found.values())


def _served(
    store: Store, record_key: str, onnx_sha256: str, target: str, root: str
) -> EngineRecord:
    where = store.describe(record_key)
    raw = store.get_bytes(record_key)
    record = EngineRecord.from_json(raw, where)
    entry = record_key.removesuffix(RECORD_FILE)
    key = record.key
    if (key.onnx_sha256, key.target, key.entry_under(root)) != (onnx_sha256, target, entry):
        problem = "names another model or build than the entry it lies in"
    elif not endorsed(store, entry, raw):
        problem = f"carries no valid endorsement ({SIGNATURE_FILE}) by this user's tdk build"
    elif store.sha256_of(entry + ENGINE_FILE) != record.plan_sha256:
        problem = f"names an engine other than the {ENGINE_FILE} beside it"
    else:
        return record
    raise UsageError(
        f"{where} {problem}: tdk serves only an engine its own build checked, and anyone who can "
        f"write {root} (the serving identity among them) could have planted this one",
        hint=f"delete {store.describe(entry)} and run tdk build again; on another machine, "
        f"point {KEY_ENV} at the key tdk build used",
    )

"""``manifest.json``: the contract of a release, written last (no manifest, no release).

Every reader parses it bounded: at most ``MANIFEST_MAX_BYTES``, nested at most
``JSON_MAX_DEPTH`` deep (counted before parsing, so no manifest or ledger can make the parser
recurse); ``packager.stores.capped.read_manifest`` fetches it from a store with that cap.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tdk.bounded import DocumentError, parse_json
from tdk.errors import TdkError

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
ARCHIVE_PREFIX = "mme/"
REPOSITORY_PREFIX = "repository/"
LEDGER_NAME = "tdk-ledger.json"  # every key tdk releases wrote here and did not delete yet
MANIFEST_MAX_BYTES = 64 * 1024 * 1024  # a release of 10,000 copies is a few MB
JSON_MAX_DEPTH = 32  # a manifest nests 5 deep (models, a model, inputs, a spec, dims)
RELEASE_HINT = "point --release at what `tdk package --release URL` wrote"


@dataclass(frozen=True)
class TensorSpec:
    """One input or output as Triton declares it (dims exclude the batch dimension)."""

    name: str
    datatype: str  # Triton's name: "FP32", "INT32", "BYTES", ...
    dims: tuple[int, ...]
    optional: bool = False
    # the inclusive (low, high) values an integer input accepts, when the model says so (the
    # ONNX graph: the rows of the table a Gather indexes, a mask's 0/1); None: not known
    range: tuple[int, int] | None = None
    # the longest each of ``dims`` may be (-1: no limit known), when the graph bounds one (the
    # position table a sequence is sliced from: ``packager.onnx_limits``); None: none known
    longest: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ManifestModel:
    """One model copy in a release: what SageMaker calls a TargetModel."""

    target_model: str  # "<name>.tar.gz", the archive name clients send
    name: str  # the Triton model name inside the archive (the one served)
    source: str  # the model's name in the source repository
    copy: int  # copy index, from 0
    sha256: str  # of the archive bytes
    size: int  # archive size in bytes
    archive: str  # key relative to the release: "mme/<name>.tar.gz"
    backend: str  # "onnxruntime", "python", "tensorrt", "ensemble", ...
    platform: str  # config's platform, "" when unset
    max_batch_size: int
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    # Triton models inside the archive, composing models first, the served model last.
    contains: tuple[str, ...] = ()
    # repository/ keys of every file, for Kubernetes targets: relative path -> sha256.
    files: dict[str, str] = field(default_factory=dict)
    # hash of what the copy is made of (inputs, renamed configs, tool, level): a republish
    # whose key is unchanged reuses this entry without rebuilding. "" in older releases.
    content_key: str = ""
    # why the copy has no mme/ archive (it cannot run on SageMaker MME: decoupled); then
    # ``archive`` and ``sha256`` are "" and only its repository/ files are published.
    mme_left_out: str = ""
    # what the copy's TensorRT engine was built for (``packager.tensorrt.engines.BuiltFor``'s
    # text, e.g. "8.9:10.16@26.05"), when ``tdk package --stack`` served it from the engine
    # cache; else ""
    built_for: str = ""

    def input(self, name: str) -> TensorSpec | None:
        return next((spec for spec in self.inputs if spec.name == name), None)


@dataclass(frozen=True)
class Manifest:
    """The list of model copies in a release plus provenance."""

    models: tuple[ManifestModel, ...]
    created_at: str
    tool_version: str
    format_version: int = FORMAT_VERSION
    # what the release's TensorRT engines were built for, "<compute capability>:<TensorRT>"
    # (e.g. "8.6:10.4"); an engine cannot tell it without a GPU. "" when not given.
    trt_built_for: str = ""

    def by_target_model(self, target_model: str) -> ManifestModel:
        """The entry whose archive name is ``target_model``, or a TdkError listing the choices."""
        for model in self.models:
            if model.target_model == target_model:
                return model
        choices = ", ".join(m.target_model for m in self.models[:10])
        more = "" if len(self.models) <= 10 else f" (and {len(self.models) - 10} more)"
        raise TdkError(
            f"TargetModel {target_model!r} is not in this release",
            hint=f"use one of: {choices}{more}",
        )

    def by_name(self, name: str) -> ManifestModel:
        """The entry whose Triton model name is ``name`` (Kubernetes targets address models so)."""
        for model in self.models:
            if model.name == name:
                return model
        raise TdkError(f"model {name!r} is not in this release", hint="run `tdk package` again")

    def keys(self) -> set[str]:
        """Every store key of this release but the manifest: archives and repository files."""
        keys = {model.archive for model in self.models if model.archive}
        keys.update(REPOSITORY_PREFIX + rel for model in self.models for rel in model.files)
        return keys

    def to_json(self) -> str:
        payload = {
            "format_version": self.format_version,
            "created_at": self.created_at,
            "tool_version": self.tool_version,
            "models": [_model_dict(model) for model in self.models],
        }
        if self.trt_built_for:
            payload["trt_built_for"] = self.trt_built_for
        return json.dumps(payload, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes, source: str = MANIFEST_NAME) -> Manifest:
        """Parse a manifest; a wrong format or missing field, a text over MANIFEST_MAX_BYTES
        or nested over JSON_MAX_DEPTH is a TdkError naming ``source``."""
        payload = bounded_json(text, source, "tdk manifest", RELEASE_HINT)
        try:
            version = payload["format_version"]
            if version != FORMAT_VERSION:
                raise TdkError(
                    f"{source}: format_version {version} is not supported (expected "
                    f"{FORMAT_VERSION})",
                    hint="re-package the release with this version of tdk",
                )
            models = tuple(_model_from_dict(item) for item in payload["models"])
            return cls(
                models=models,
                created_at=payload["created_at"],
                tool_version=payload["tool_version"],
                format_version=version,
                trt_built_for=str(payload.get("trt_built_for", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise TdkError(
                f"{source}: not a tdk manifest ({exc.__class__.__name__}: {exc})",
                hint=RELEASE_HINT,
            ) from exc


@dataclass(frozen=True)
class Ledger:
    """The keys tdk wrote under a release root, so ``--prune`` deletes only those.

    Written before a publish changes any object (with the keys it is about to write) and after
    it ends, so even a publish cut off between the two leaves its keys recorded.
    """

    keys: frozenset[str]

    def to_json(self) -> str:
        payload = {"format_version": FORMAT_VERSION, "keys": sorted(self.keys)}
        return json.dumps(payload, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes, source: str = LEDGER_NAME) -> Ledger:
        hint = f"delete {source} if you wrote it; --prune then only knows the manifest"
        payload = bounded_json(text, source, "tdk ledger", hint)
        try:
            keys = payload["keys"]
            if payload["format_version"] != FORMAT_VERSION or not isinstance(keys, list):
                raise ValueError("unsupported format")
            if not all(isinstance(key, str) for key in keys):
                raise ValueError("keys must be strings")
            outside = [key for key in keys if not _inside(key)]
            if outside:
                raise ValueError(f"key {outside[0][:100]!r} is not a path inside the release")
            return cls(frozenset(keys))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise TdkError(
                f"{source}: not a tdk ledger ({exc.__class__.__name__}: {exc})",
                hint=hint,
            ) from exc


def bounded_json(text: str | bytes, source: str, what: str, hint: str) -> Any:
    """``text`` parsed by the bounded reader (``tdk.bounded``): at most MANIFEST_MAX_BYTES,
    nested at most JSON_MAX_DEPTH deep (counted before parsing: Python's parser recurses once
    per level), finite numbers, no lone surrogates; TdkError "not a <what>" naming ``source``."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(raw) > MANIFEST_MAX_BYTES:
        raise TdkError(
            f"{source}: not a {what} (larger than {MANIFEST_MAX_BYTES} bytes)", hint=hint
        )
    try:
        return parse_json(raw, source, hint, JSON_MAX_DEPTH)
    except DocumentError as exc:
        reason = exc.reason
        if reason.startswith("nested more than"):
            reason = f"JSON {reason}; tdk writes 5 levels"
        raise TdkError(f"{source}: not a {what} ({reason})", hint=hint) from None


def _inside(key: str) -> bool:
    """A key a release writes: relative, ``/``-separated, no ``..``, backslash or empty part."""
    parts = key.split("/")
    return "\\" not in key and all(part not in ("", ".", "..") for part in parts)


def _model_dict(model: ManifestModel) -> dict[str, Any]:
    """``model`` as JSON data; a tensor without a known range carries no ``range`` key (the
    manifests of releases made before ranges were recorded read the same)."""
    data = asdict(model)
    for key in ("inputs", "outputs"):
        for spec in data[key]:
            for optional in ("range", "longest"):
                if spec[optional] is None:
                    del spec[optional]
    return data


def _spec(item: dict[str, Any]) -> TensorSpec:
    bounds = item.get("range")
    return TensorSpec(
        name=item["name"],
        datatype=item["datatype"],
        dims=tuple(int(d) for d in item["dims"]),
        optional=bool(item.get("optional", False)),
        range=None if bounds is None else (int(bounds[0]), int(bounds[1])),
        longest=None if item.get("longest") is None else tuple(int(d) for d in item["longest"]),
    )


def _model_from_dict(item: dict[str, Any]) -> ManifestModel:
    fields = dict(item)
    fields["inputs"] = tuple(_spec(spec) for spec in item["inputs"])
    fields["outputs"] = tuple(_spec(spec) for spec in item["outputs"])
    fields["contains"] = tuple(item.get("contains", ()))
    fields["files"] = dict(item.get("files", {}))
    fields["content_key"] = str(item.get("content_key", ""))
    fields["built_for"] = str(item.get("built_for", ""))
    return ManifestModel(**fields)

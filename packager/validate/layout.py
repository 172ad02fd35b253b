"""Layout rules: version directories, the model file each backend loads, names."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from packager.config import PLATFORM_BACKENDS
from packager.inputs import scan_model_dir
from packager.names import name_problem
from packager.repository import ModelDir
from packager.validate.findings import Finding, Sink, finding
from tdk.errors import UnsafeInputError

# The file (or directory, ending in "/") Triton's backends load from a version directory.
PLATFORM_FILES = {
    "tensorrt_plan": "model.plan",
    "onnxruntime_onnx": "model.onnx",
    "pytorch_libtorch": "model.pt",
    "tensorflow_savedmodel": "model.savedmodel/",
    "tensorflow_graphdef": "model.graphdef",
}
BACKEND_FILES = {
    "tensorrt": "model.plan",
    "onnxruntime": "model.onnx",
    "pytorch": "model.pt",
    "tensorflow": "model.savedmodel/",
    "python": "model.py",
    "openvino": "model.xml",
    "dali": "model.dali",
}
# Backends that accept the model either as a file or as a directory of that name.
DIRECTORY_OR_FILE = {"onnxruntime", "openvino"}


def expected_file(model: ModelDir) -> str | None:
    """What each version directory must hold ("name/" for a directory), None when unknown."""
    config = model.config
    if model.is_ensemble:
        return None
    default = PLATFORM_FILES.get(config.platform) or BACKEND_FILES.get(model.backend)
    if config.default_model_filename:
        if not _plain_name(str(config.default_model_filename)):
            return None  # reported by check_layout; never resolve a path outside the model
        is_dir = default is not None and default.endswith("/")
        return str(config.default_model_filename) + ("/" if is_dir else "")
    return default


def served_versions(model: ModelDir) -> list[str]:
    """The version directories Triton loads under the config's version_policy."""
    versions = model.versions()
    policy = model.config.version_policy
    choice = policy.WhichOneof("policy_choice")
    if choice == "all":
        return versions
    if choice == "specific":
        wanted = {int(v) for v in policy.specific.versions}
        return [v for v in versions if int(v) in wanted]
    count = policy.latest.num_versions if choice == "latest" else 1
    return versions[-max(count, 1) :]


def check_layout(model: ModelDir, sink: Sink) -> None:
    """Directory name, names, backend/platform, version directories and model files."""
    _check_names(model, sink)
    _check_backend(model, sink)
    _check_versions(model, sink)
    _check_default_filename(model, sink)
    _check_model_files(model, sink)
    _check_entries(model, sink)


def _check_entries(model: ModelDir, sink: Sink) -> None:
    """What ``tdk package`` refuses (links, fifos, devices) with the very same message."""
    try:
        scan_model_dir(model.path)
    except UnsafeInputError as exc:
        sink.report("TDK114", "model directory", exc.message, exc.hint, file=model.path)


def check_completed(model: ModelDir, sink: Sink) -> None:
    """A model without config.pbtxt: say which backend completes its config (TDK117/118)."""
    if model.completed == "tensorrt":
        sink.report(
            "TDK118",
            "config.pbtxt",
            f"{model.path} has no config.pbtxt: Triton's TensorRT backend completes it from "
            "the engine at load; without TensorRT tdk cannot read the engine, so its inputs and "
            "outputs are unchecked and the release manifest cannot list them",
            "write config.pbtxt with the engine's inputs and outputs (`tdk import` of the ONNX "
            "it was built from gives them)",
            file=model.path,
        )
    elif model.completed:
        config = model.config
        batching = (
            f"max_batch_size {config.max_batch_size}"
            + (" with dynamic batching" if config.HasField("dynamic_batching") else "")
            if config.max_batch_size > 0
            else "max_batch_size 0 (a tensor without a variable first dimension: no batching)"
        )
        sink.report(
            "TDK117",
            "config.pbtxt",
            f"{model.path} has no config.pbtxt: Triton's {model.completed} backend completes "
            f"it from the model file ({len(config.input)} input(s), {len(config.output)} "
            f"output(s), {batching}); validated and packaged as completed",
            f"`tdk validate --show-config {model.path}` prints it; `tdk import` writes it "
            "so you own it",
            file=model.path,
        )


def _plain_name(name: str) -> bool:
    return "/" not in name and "\\" not in name and name not in (".", "..")


def _check_default_filename(model: ModelDir, sink: Sink) -> None:
    """``default_model_filename`` must name an entry of the version directory, not a path."""
    name = str(model.config.default_model_filename)
    if name and not _plain_name(name):
        sink.report(
            "TDK112",
            "default_model_filename",
            f"{name!r} is a path; Triton looks for it inside each version directory, and a "
            "path could point outside the model",
            'give only the file or directory name, e.g. default_model_filename: "model.onnx"',
        )


def _check_names(model: ModelDir, sink: Sink) -> None:
    config_name = str(model.config.name)
    if config_name and config_name != model.dir_name:
        sink.report(
            "TDK103",
            "name",
            f"name {config_name!r} differs from the directory name {model.dir_name!r}; "
            "Triton refuses to load the model",
            f"rename the directory to {config_name!r} or set name: {model.dir_name!r}",
        )
    for label, value in (("name", config_name), ("directory name", model.dir_name)):
        problem = name_problem(value) if value else None
        if problem:
            sink.report(
                "TDK104",
                "name",
                f"{label} {value!r} {problem} (SageMaker TargetModel and Triton name rules)",
                "use only letters, digits, '.', '_' and '-', starting with a letter, digit or '_'",
            )


# Backends whose platform Triton checks (core GetBackendType); any platform goes with others.
TYPED_BACKENDS = frozenset({"tensorflow", "tensorrt", "onnxruntime", "pytorch"})


def _check_backend(model: ModelDir, sink: Sink) -> None:
    """On the autocompleted config, as core ValidateModelConfig checks backend and platform."""
    config = model.config
    platform, backend = str(config.platform), str(config.backend)
    if platform == "ensemble" and backend:
        sink.report(
            "TDK107",
            "backend",
            f"an ensemble must have an empty backend, got {backend!r}",
            "remove `backend` from the ensemble's config",
        )
    elif platform and not backend and platform != "ensemble":
        sink.report(
            "TDK106",
            "platform",
            f"platform {platform!r} names no backend Triton knows (and `backend` is not set)",
            f"use one of {', '.join(sorted(PLATFORM_TYPES))}, or set `backend`",
        )
    elif backend in TYPED_BACKENDS and PLATFORM_TYPES.get(platform) != backend:
        sink.report(
            "TDK107",
            "backend",
            f"backend {backend!r} does not match platform {platform!r}",
            "remove one of `platform` and `backend`, or make them agree",
        )
    if not platform and not backend:
        sink.report(
            "TDK108",
            "backend",
            "neither `backend` nor `platform` is set and Triton cannot infer them from the files "
            "of the first version directory (model.onnx, model.plan, model.pt, model.py, ...)",
            'set backend (e.g. backend: "onnxruntime", "python", "tensorrt")',
        )


# Triton's platforms and the backend each runs on (core GetBackendTypeFromPlatform).
PLATFORM_TYPES = {p: b for p, b in PLATFORM_BACKENDS.items() if b in TYPED_BACKENDS}


def _check_versions(model: ModelDir, sink: Sink) -> None:
    versions = model.versions()
    if not versions:
        sink.report(
            "TDK109",
            "version directories",
            f"{model.path} has no numeric version directory; Triton finds nothing to load",
            f"put the model files in {model.path / '1'}/",
            file=model.path,
        )
    for child in sorted(model.path.iterdir()):
        if child.is_dir() and not child.name.isdigit() and not child.name.startswith("."):
            sink.report(
                "TDK110",
                "version directories",
                f"{child.name!r} is not a numeric version directory; Triton ignores it",
                f"rename it to a number (e.g. {model.path / '1'}) or remove it",
                file=child,
            )
    policy = model.config.version_policy
    if policy.WhichOneof("policy_choice") == "specific":
        for version in policy.specific.versions:
            if str(version) not in {str(int(v)) for v in versions}:
                sink.report(
                    "TDK111",
                    "version_policy.specific.versions",
                    f"version {version} is listed but {model.path / str(version)} does not exist",
                    f"create {model.path / str(version)}/ or remove {version} from the list",
                )


def _check_model_files(model: ModelDir, sink: Sink) -> None:
    expected = expected_file(model)
    if expected is None:
        return
    name = expected.rstrip("/")
    served = set(served_versions(model))
    for version in model.versions():
        path = model.path / version / name
        if _present(path, expected, model.backend):
            if path.is_file() and path.stat().st_size == 0:
                sink.report(
                    "TDK115",
                    "model file",
                    f"{path} is empty (0 bytes); no backend can load it",
                    "re-export the model, or copy the complete file again",
                    file=path,
                )
            continue
        kind = "directory" if expected.endswith("/") else "file"
        message = f"version {version} has no model {kind} {name!r}"
        hint = (
            f"put the model at {path}"
            + ("/" if kind == "directory" else "")
            + " or set default_model_filename to the file's name"
        )
        if version in served:
            sink.report("TDK113", "default_model_filename", message, hint, file=path)
        else:
            sink.report(
                "TDK116",
                "default_model_filename",
                message + " (not served by the version_policy)",
                hint,
                file=path,
            )


def _present(path: Path, expected: str, backend: str) -> bool:
    if expected.endswith("/"):
        return path.is_dir()
    return path.is_file() or (backend in DIRECTORY_OR_FILE and path.is_dir())


def duplicate_names(models: Iterable[ModelDir]) -> list[Finding]:
    """TDK105 for each model whose name an earlier model already has: Triton refuses a name
    that appears in more than one repository. ``tdk validate`` and ``tdk package`` share it."""
    first: dict[str, ModelDir] = {}
    found = []
    for model in models:
        other = first.setdefault(model.name, model)
        if other is not model:
            found.append(
                finding(
                    "TDK105",
                    file=model.config_path,
                    field="name",
                    message=f"model name {model.name!r} is also used by {other.path}; Triton "
                    "refuses a name that appears in more than one repository",
                    fix="rename one of them (directory and `name:`)",
                    model=model.name,
                )
            )
    return found

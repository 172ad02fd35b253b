"""Read and write ``config.pbtxt`` with Triton's own ``ModelConfig`` protobuf schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from packager.protos import generated_module
from tdk.errors import ConfigError

CONFIG_NAME = "config.pbtxt"


def _pb() -> Any:
    """Triton's ``model_config_pb2`` as tritonclient ships it (see ``packager.protos``)."""
    return generated_module("tritonclient.grpc.model_config_pb2", "'tritonclient[grpc]'")


def new_config() -> Any:
    """An empty ``inference.ModelConfig`` message."""
    return _pb().ModelConfig()


def parse_config(text: str, source: str = CONFIG_NAME) -> Any:
    """Parse protobuf text format into a ``ModelConfig``; errors name ``source`` and the line."""
    config = new_config()
    try:
        text_format.Parse(text, config)
    except text_format.ParseError as exc:
        raise ConfigError(
            f"{source}: not a valid Triton ModelConfig: {exc}",
            hint="fix the field at that line (see Triton's model_config.proto for names and types)",
        ) from exc
    return config


def load_config(path: Path) -> Any:
    """Read and parse ``path``; unreadable or non-UTF-8 files are a ConfigError."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: cannot read the model config ({exc.__class__.__name__}: {exc})",
            hint="make config.pbtxt a readable UTF-8 text file",
        ) from exc
    return parse_config(text, str(path))


def dump_config(config: Message) -> str:
    """Canonical text format: stable field order, so identical configs give identical bytes."""
    return str(text_format.MessageToString(config, as_utf8=True))


def datatype_name(value: int) -> str:
    """``TYPE_FP32`` enum value -> Triton's wire name ``FP32`` (``TYPE_STRING`` -> ``BYTES``)."""
    name = str(_pb().DataType.Name(value)).removeprefix("TYPE_")
    return "BYTES" if name == "STRING" else name


def datatype_value(name: str) -> int:
    """Triton's wire name ``FP32`` (``BYTES``) -> the ``TYPE_FP32`` (``TYPE_STRING``) enum value."""
    return int(_pb().DataType.Value("TYPE_STRING" if name == "BYTES" else f"TYPE_{name}"))


def backend_of(config: Any) -> str:
    """The backend Triton will use: explicit ``backend`` or the one implied by ``platform``."""
    if config.backend:
        return str(config.backend)
    return PLATFORM_BACKENDS.get(config.platform, config.platform)


PLATFORM_BACKENDS = {
    "tensorrt_plan": "tensorrt",
    "onnxruntime_onnx": "onnxruntime",
    "pytorch_libtorch": "pytorch",
    "tensorflow_savedmodel": "tensorflow",
    "tensorflow_graphdef": "tensorflow",
    "openvino": "openvino",
    "ensemble": "ensemble",
}


def autocomplete_backend(config: Any, model_path: Path) -> Any:
    """A copy of ``config`` with ``backend``, ``platform`` and ``default_model_filename`` filled
    in as Triton does before it validates a config (core ``AutoCompleteBackendFields``): from
    the platform, the default file name, or the files of the first version directory."""
    done = new_config()
    done.CopyFrom(config)
    subdirs = sorted(p.name for p in model_path.iterdir() if p.is_dir())
    first = model_path / subdirs[0] if subdirs else None
    try:  # an unreadable version directory is reported by validate (TDK114), not guessed from
        content = {p.name: p.is_dir() for p in first.iterdir()} if first else {}
    except OSError:
        content = {}
    if not done.name:
        done.name = model_path.name
    _complete_tensorflow(done, content, first is not None)
    if done.platform.startswith("tensorflow_"):
        return done
    guess = not done.platform and not done.default_model_filename and first is not None
    for backend, platform, filename, file_only in _AUTOCOMPLETE:
        named = (platform and done.platform == platform) or done.default_model_filename == filename
        found = guess and filename in content and not (file_only and content[filename])
        if not done.backend and (named or found):
            done.backend = backend
        if done.backend == backend:
            done.platform = done.platform or platform
            done.default_model_filename = done.default_model_filename or filename
            return done
    if not (done.backend or done.platform or done.default_model_filename) and "." in done.name:
        done.backend = done.name.split(".", 1)[1]  # Triton's custom-backend naming: x.<backend>
        done.default_model_filename = f"model.{done.backend}"
    return done


# backend, platform it implies, model file name, whether a directory of that name does not count
_AUTOCOMPLETE = (
    ("tensorrt", "tensorrt_plan", "model.plan", True),
    ("onnxruntime", "onnxruntime_onnx", "model.onnx", False),
    ("openvino", "", "model.xml", False),
    ("pytorch", "pytorch_libtorch", "model.pt", True),
    ("python", "", "model.py", False),
)


def _complete_tensorflow(config: Any, content: dict[str, bool], has_version: bool) -> None:
    if not config.platform and config.backend in ("", "tensorflow"):
        if config.default_model_filename == "model.savedmodel":
            config.platform = "tensorflow_savedmodel"
        elif config.default_model_filename == "model.graphdef":
            config.platform = "tensorflow_graphdef"
        elif not config.default_model_filename and has_version:
            if content.get("model.savedmodel") is True:
                config.platform = "tensorflow_savedmodel"
            if content.get("model.graphdef") is False:
                config.platform = "tensorflow_graphdef"
    if config.platform in ("tensorflow_savedmodel", "tensorflow_graphdef"):
        config.backend = config.backend or "tensorflow"
        saved = config.platform == "tensorflow_savedmodel"
        default = "model.savedmodel" if saved else "model.graphdef"
        config.default_model_filename = config.default_model_filename or default

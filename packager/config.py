"""Read and write ``config.pbtxt`` with Triton's own ``ModelConfig`` protobuf schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from tdk.errors import ConfigError

CONFIG_NAME = "config.pbtxt"


def _pb() -> Any:
    # tritonclient ships Triton's schema; imported lazily because grpc is slow to import.
    from tritonclient.grpc import model_config_pb2

    return model_config_pb2


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

"""Generated protobuf modules loaded on their own, without their package's ``__init__``.

``tritonclient.grpc`` and ``onnx`` import grpc, numpy and ml_dtypes when their package loads:
about 150 ms that a no-op ``tdk package`` or ``tdk validate`` would otherwise spend before doing
anything. Their ``*_pb2`` modules need only ``google.protobuf``. Each is registered under its
own dotted name, so a later normal import of the package reuses it (one schema, one class)."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType

from tdk.errors import ConfigError

_LOCK = threading.Lock()


def generated_module(name: str, install: str) -> ModuleType:
    """The module ``name`` (e.g. ``onnx.onnx_ml_pb2``), loaded from its file in the installed
    distribution; ``install`` is what to tell the user to install when it is missing.

    Thread-safe (the local endpoint parses configs on worker threads): a module is visible in
    ``sys.modules`` only once it has run to the end, and one thread loads it at a time.
    """
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "DESCRIPTOR"):
        return module
    with _LOCK:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "DESCRIPTOR"):
            return module
        if module is not None or name.rpartition(".")[0] in sys.modules:
            return importlib.import_module(name)  # its package is (being) imported: ask it
        module = _load(name, install)
        return sys.modules.setdefault(name, module)


def _load(name: str, install: str) -> ModuleType:
    top, *middle, leaf = name.split(".")
    package = importlib.util.find_spec(top)
    if package is None or not package.submodule_search_locations:
        raise ConfigError(f"{top} is not installed: it ships {leaf}", hint=f"pip install {install}")
    path = Path(package.submodule_search_locations[0]).joinpath(*middle, f"{leaf}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ConfigError(f"{path}: cannot be loaded", hint=f"reinstall {install}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

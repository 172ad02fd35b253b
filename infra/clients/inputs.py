"""Turn command-line inputs (``NAME=@file.npy``, ``NAME='[json]'``, ``--text``) into arrays.

The manifest says each input's datatype and dims, so values are shaped for it (a batch
dimension is added when the model batches and the value has none) and checked before sending.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from packager.manifest import ManifestModel, TensorSpec
from tdk.bounded import DocumentError, parse_json, read_bounded
from tdk.errors import UsageError

#: the most one input file or sample request may hold (a FIFO or device is refused before it)
INPUT_BYTES = 256 * 1024 * 1024

SAMPLE_TEXT = "the quick brown fox jumps over the lazy dog"
#: where ``make models`` and ``make demo`` write the sample inputs the docs use
SAMPLE_INPUTS = "model_repos/inputs"


def _unreadable_hint(path: Path, exc: Exception) -> str:
    """What makes the file: the sample inputs' make target, or numpy for your own."""
    if not isinstance(exc, FileNotFoundError):
        return "pass a .npy file (numpy.save), or --example for inputs made from the manifest"
    if f"{SAMPLE_INPUTS}/" in path.as_posix():
        return f"`make models` (and `make demo`) write the sample inputs in {SAMPLE_INPUTS}/"
    return "write it with numpy.save, or pass --example for inputs made from the manifest"


def _with_batch(model: ManifestModel, spec: TensorSpec, array: np.ndarray) -> np.ndarray:
    if model.max_batch_size > 0 and array.ndim == len(spec.dims):
        return np.expand_dims(array, 0)
    return array


def parse_input(model: ManifestModel, option: str) -> tuple[str, np.ndarray]:
    """One ``--input NAME=@file.npy`` or ``--input NAME=<json>`` option."""
    name, sep, value = option.partition("=")
    if not sep or not name:
        raise UsageError(
            f"--input {option!r}: expected NAME=@file.npy or NAME=<json>",
            hint="e.g. --input token_ids=@ids.npy or --input x='[[1, 2, 3]]'",
        )
    spec = model.input(name)
    if spec is None:
        names = ", ".join(s.name for s in model.inputs)
        raise UsageError(
            f"--input {name}: {model.target_model} has no such input", hint=f"use {names}"
        )
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            array = np.load(io.BytesIO(read_bounded(path, INPUT_BYTES)), allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UsageError(
                f"--input {name}: cannot read {path}: {exc}", hint=_unreadable_hint(path, exc)
            ) from exc
    else:
        try:
            data = parse_json(value, f"--input {name}", "quote the JSON value")
        except DocumentError as exc:
            raise UsageError(f"--input {name}: not JSON: {exc.reason}", hint=exc.hint) from None
        array = _from_json(model, spec, data)
    check_range(model, spec, array, f"--input {name}")
    array = _with_batch(model, spec, array)
    check_longest(model, spec, array, f"--input {name}")
    return name, array


def check_longest(model: ManifestModel, spec: TensorSpec, array: np.ndarray, where: str) -> None:
    """A UsageError, before anything is sent, when a dimension of ``array`` (batch axis
    included when the model batches) is longer than the manifest says the model takes."""
    if spec.longest is None:
        return
    shape = array.shape[1:] if model.max_batch_size > 0 else array.shape
    for axis, (size, most) in enumerate(zip(shape, spec.longest, strict=False)):
        if 0 <= most < size:
            raise UsageError(
                f"{where}: dimension {axis} of {spec.name} is {size}, longer than the {most} "
                f"{model.target_model} takes (its manifest: the table the model slices it from)",
                hint=f"send at most {most} (e.g. truncate the sequence to {most} tokens)",
            )


def check_range(model: ManifestModel, spec: TensorSpec, array: np.ndarray, where: str) -> None:
    """A UsageError, before anything is sent, when an integer input holds a value outside the
    range the manifest records for it (the rows of the table it indexes, a mask's 0/1): the
    model would fail on it, and the endpoint answer 500."""
    if spec.range is None or array.dtype.kind not in "biu" or array.size == 0:
        return
    low, high = spec.range
    outside = array[(array < low) | (array > high)]
    if outside.size:
        raise UsageError(
            f"{where}: value {outside.flat[0]} is outside [{low}, {high}], the values "
            f"{model.target_model} takes in {spec.name} (its manifest; "
            f"{outside.size} value(s) outside)",
            hint=f"send values of {spec.name} from {low} to {high} (e.g. token ids of the "
            "model's own vocabulary)",
        )


def _from_json(model: ManifestModel, spec: TensorSpec, data: object) -> np.ndarray:
    """JSON numbers carry no dtype: they become the declared one, when they fit it exactly."""
    from infra.clients.base import numpy_dtype

    want = numpy_dtype(spec.datatype)
    if want is None or want is np.object_:
        return np.array(data, dtype=object)
    given = np.array(data)
    if given.dtype.kind not in "biuf":
        raise UsageError(
            f"--input {spec.name}: {model.target_model} expects {spec.datatype} numbers, "
            f"got {given.dtype} values",
            hint=f"pass a JSON array of numbers, e.g. --input {spec.name}='[[1, 2, 3]]'",
        )
    array: np.ndarray = given.astype(want)
    if np.dtype(want).kind in "biu" and not np.array_equal(array, given):
        raise UsageError(
            f"--input {spec.name}: {model.target_model} expects {spec.datatype}; the values "
            "do not fit it (fractions or out of range)",
            hint=f"pass whole numbers in the {spec.datatype} range",
        )
    return array


SAMPLE_SUFFIXES = (".npz", ".json")
MAX_SAMPLES = 1000  # sample requests read from a directory at most (each is held in memory)


def sample_requests(
    model: ManifestModel, directory: Path, batch: int = 1
) -> list[dict[str, np.ndarray]]:
    """``--samples DIR``: one request per ``.npz`` (arrays by input name) or ``.json``
    (``{"NAME": [...]}``) file, in name order; an input a file leaves out keeps its example."""
    if not directory.is_dir():
        raise UsageError(f"--samples {directory}: not a directory", hint=SAMPLES_HINT)
    files = sorted(p for p in directory.iterdir() if p.suffix in SAMPLE_SUFFIXES and p.is_file())
    if not files:
        raise UsageError(f"--samples {directory}: no .npz or .json file", hint=SAMPLES_HINT)
    if len(files) > MAX_SAMPLES:
        raise UsageError(
            f"--samples {directory}: {len(files)} files (at most {MAX_SAMPLES})",
            hint="keep a representative subset",
        )
    requests = []
    for path in files:
        given = {}
        for name, array in _read_sample(model, path).items():
            spec = _spec_of(model, name, path)
            check_range(model, spec, array, f"{path}: {name}")
            given[name] = _with_batch(model, spec, array)
            check_longest(model, spec, given[name], f"{path}: {name}")
        requests.append(_replace(model, example_inputs(model, batch), given))
    return requests


SAMPLES_HINT = 'a directory of .npz (np.savez(f, NAME=array)) or .json ({"NAME": [...]}) files'


def _spec_of(model: ManifestModel, name: str, path: Path) -> TensorSpec:
    spec = model.input(name)
    if spec is None:
        names = ", ".join(s.name for s in model.inputs)
        raise UsageError(f"{path}: {model.target_model} has no input {name!r}", hint=f"use {names}")
    return spec


def _read_sample(model: ManifestModel, path: Path) -> dict[str, np.ndarray]:
    try:
        raw = read_bounded(path, INPUT_BYTES)
        if path.suffix == ".npz":
            with np.load(io.BytesIO(raw), allow_pickle=False) as archive:
                return {name: archive[name] for name in archive.files}
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})", hint=SAMPLES_HINT) from exc
    try:
        data = parse_json(raw, str(path), SAMPLES_HINT)
    except DocumentError as exc:
        raise UsageError(f"{path}: {exc.reason}", hint=SAMPLES_HINT) from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a JSON object of input names", hint=SAMPLES_HINT)
    return {name: _from_json(model, _spec_of(model, name, path), value)
            for name, value in data.items()}  # fmt: skip


def text_inputs(model: ManifestModel, text: str) -> dict[str, np.ndarray]:
    """``--text``: the value of the model's single BYTES input."""
    specs = [spec for spec in model.inputs if spec.datatype == "BYTES"]
    if len(specs) != 1:
        raise UsageError(
            f"--text: {model.target_model} has {len(specs)} BYTES inputs, --text needs exactly one",
            hint="pass every input with --input NAME=...",
        )
    spec = specs[0]
    shape = tuple(1 if d < 0 else d for d in spec.dims)
    array = np.full(shape, text.encode("utf-8"), dtype=object)
    return {spec.name: _with_batch(model, spec, array)}


#: the most bytes the example tensors of one request may take: they are made in memory, then
#: encoded (a copy); a manifest's dims of 100000 x 100000 x 100000 asked numpy for 3.6 PiB
MAX_EXAMPLE_BYTES = 256 * 1024 * 1024


def _example_shapes(model: ManifestModel, batch: int) -> list[tuple[int, ...]]:
    """Each input's example shape (a variable dim taken as 1), refused when together they
    would exceed ``MAX_EXAMPLE_BYTES`` (counted before anything is allocated)."""
    from infra.clients.base import numpy_dtype

    shapes, total = [], 0
    for spec in model.inputs:
        dims = tuple(1 if d < 0 else d for d in spec.dims)
        shape = (batch, *dims) if model.max_batch_size > 0 else dims
        size = np.dtype(numpy_dtype(spec.datatype) or np.float32).itemsize
        each = len(SAMPLE_TEXT) + 4 if spec.datatype == "BYTES" else size
        total += math.prod(shape) * each
        if total > MAX_EXAMPLE_BYTES:
            raise UsageError(
                f"--example: {model.target_model}'s input {spec.name} has shape "
                f"{list(shape)}, over {MAX_EXAMPLE_BYTES // 1024**2} MiB of example values "
                f"with the inputs before it ({total:,} bytes)",
                hint=f"pass {spec.name} yourself with --input {spec.name}=FILE.npy, or check "
                "the dims its manifest records",
            )
        shapes.append(shape)
    return shapes


def example_inputs(model: ManifestModel, batch: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic inputs of the declared dtypes (bench, demo, `tdk local check`)."""
    from infra.clients.base import numpy_dtype

    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for spec, shape in zip(model.inputs, _example_shapes(model, batch), strict=True):
        want = numpy_dtype(spec.datatype) or np.float32
        if spec.datatype == "BYTES":
            arrays[spec.name] = np.full(shape, SAMPLE_TEXT.encode(), dtype=object)
        elif spec.datatype.startswith("FP"):
            arrays[spec.name] = rng.standard_normal(shape).astype(want)
        elif spec.datatype == "BOOL":
            arrays[spec.name] = np.ones(shape, dtype=np.bool_)
        elif spec.range is not None:  # the values the model accepts (manifest, ONNX graph)
            low, high = spec.range
            arrays[spec.name] = rng.integers(low, high + 1, size=shape).astype(want)
        else:
            arrays[spec.name] = rng.integers(1, 100, size=shape).astype(want)
    return arrays


def with_overrides(
    model: ManifestModel,
    arrays: dict[str, np.ndarray],
    options: list[str] | None,
    text: str | None = None,
) -> dict[str, np.ndarray]:
    """``arrays`` with the tensors ``--text`` and ``--input NAME=...`` give replacing their
    example values; a given value of batch 1 is repeated to the examples' batch."""
    given = text_inputs(model, text) if text is not None else {}
    for option in options or []:
        name, array = parse_input(model, option)
        given[name] = array
    return _replace(model, arrays, given)


def _replace(
    model: ManifestModel, arrays: dict[str, np.ndarray], given: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    result = dict(arrays)
    for name, array in given.items():
        example = arrays.get(name)
        if (
            example is not None
            and model.max_batch_size > 0
            and array.ndim == example.ndim
            and array.shape[0] == 1
            and example.shape[0] > 1
        ):
            array = np.repeat(array, example.shape[0], axis=0)
        result[name] = array
    return result


def summarize(array: np.ndarray, limit: int = 6) -> str:
    """A short human summary of an output: shape, then a few values or the argmax."""
    flat = array.ravel()
    if array.dtype == np.object_:
        shown = ", ".join(repr(v) for v in flat[:limit])
    elif flat.size <= limit:
        shown = ", ".join(
            f"{v:.4g}" if np.issubdtype(array.dtype, np.floating) else str(v) for v in flat
        )
    else:
        top = int(np.argmax(array.reshape(array.shape[0], -1)[0]))
        shown = f"argmax {top}"
    return f"{list(array.shape)} {shown}"


def outputs_json(outputs: dict[str, np.ndarray]) -> dict[str, Any]:
    """Decoded outputs as ``tdk invoke --json`` shows them: shape, dtype and the values (BYTES
    as text)."""
    return {
        name: {"shape": list(value.shape), "dtype": str(value.dtype), "data": _plain(value)}
        for name, value in outputs.items()
    }


def _plain(value: np.ndarray) -> object:
    if value.dtype == np.object_:
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value.ravel()]
    return value.tolist()

"""What one engine build is, and the work directory it runs from.

``engine_build`` turns a model directory (``config.pbtxt`` + ``<version>/model.onnx``), the
target's GPU and Triton release, and the build options into an ``EngineBuild``: its profile,
precision and cache key (``packager.tensorrt.engines.EngineKey``). ``stage`` writes what
``pod_build.py`` needs wherever the engine is built: the ONNX model, inputs at the profile's
opt shapes, ONNX Runtime's outputs on them (the parity reference, computed here on CPU) and
the trtexec arguments.

The TensorRT container is ``nvcr.io/nvidia/tensorrt:<base>-py3`` of the release whose base
image the Triton image is built on (``hardware.Image.base``: Triton 26.05 is built on 26.04's
``py3-min`` base, server build.py at v2.69.0), so the engine's TensorRT is the one Triton loads
it with; NVIDIA builds Triton's test engines with a TensorRT container likewise
(``qa/common/gen_qa_model_repository``; checked 2026-11-27).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from packager.config import CONFIG_NAME, load_config
from packager.profiles import Profile, profile_from_config
from packager.stores.base import sha256_file
from packager.tensorrt.engines import HARDWARE_LEVELS, EngineKey
from tdk.errors import UsageError

TENSORRT_IMAGE = "nvcr.io/nvidia/tensorrt:{release}-py3"
#: default parity tolerance per precision (atol, rtol); FP16 keeps ~3 significant digits
TOLERANCE = {"fp32": (1e-3, 1e-3), "fp16": (2e-2, 2e-2)}
POD_SCRIPT = Path(__file__).with_name("pod_build.py")
#: ONNX Runtime's input type -> numpy dtype of the parity inputs
_DTYPES = {
    "tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_,
}  # fmt: skip


@dataclass(frozen=True)
class BuildOptions:
    """``tdk build``'s options: the profile, the precision, hardware compatibility, tolerance."""

    shapes: tuple[str, ...] = ()
    opt_batch: int | None = None
    fp16: bool = False
    hardware: str = ""  # "" or "ampere+" (HARDWARE_LEVELS)
    atol: float | None = None
    rtol: float | None = None

    @property
    def precision(self) -> str:
        return "fp16" if self.fp16 else "fp32"

    def tolerance(self) -> tuple[float, float]:
        atol, rtol = TOLERANCE[self.precision]
        return (
            self.atol if self.atol is not None else atol,
            self.rtol if self.rtol is not None else rtol,
        )


@dataclass(frozen=True)
class BuildTarget:
    """Where an engine will run: the GPU (kind, compute capability) and the Triton release."""

    label: str
    gpu: str
    compute: tuple[int, int]
    release: str  # "26.05"
    tensorrt: tuple[int, int] | None  # the image's TensorRT, None where tdk's facts lack it
    base: str = ""  # the release of the image's CUDA/TensorRT base ("" = ``release``)
    #: why ``base`` is an assumption (no source gave it: 26.09, 26.10), "" where a source did
    base_note: str = ""

    @property
    def container_release(self) -> str:
        """The release of the TensorRT container that builds engines this Triton loads."""
        return self.base or self.release

    @property
    def tensorrt_image(self) -> str:
        return TENSORRT_IMAGE.format(release=self.container_release)

    @property
    def cache_targets(self) -> list[str]:
        """The engine-cache targets (``EngineKey.target``) whose engines run here: this compute
        capability's, then a hardware-compatible (``ampere+``) one on Ampere and later."""
        found = [f"cc{self.compute[0]}.{self.compute[1]}-tensorrt-{self.tensorrt_key}"]
        if self.compute >= (8, 0):
            found.append(f"ccampere+-tensorrt-{self.tensorrt_key}")
        return found

    @property
    def compute_text(self) -> str:
        return f"{self.compute[0]}.{self.compute[1]}"

    @property
    def tensorrt_key(self) -> str:
        """The TensorRT part of the cache key: ``10.13``, or ``release-26.05`` when unknown."""
        if self.tensorrt is None:
            return f"release-{self.container_release}"
        return f"{self.tensorrt[0]}.{self.tensorrt[1]}"


def stack_target(settings: Any, stack: str) -> BuildTarget:
    """Where ``stack``'s Triton runs (its target's ``offer``); a UsageError without a GPU."""
    spec = settings.program.offer(settings.config)
    if spec.gpu is None:
        raise UsageError(
            f"stack {stack} serves on {spec.label}, which has no GPU: a TensorRT engine needs one",
            hint="build for a stack with a GPU instance type or node pool",
        )
    image = spec.image
    note = "" if image.base_verified else image.base_text()
    return BuildTarget(
        spec.label, spec.gpu.kind, spec.gpu.compute, image.version, image.tensorrt, image.base,
        note,
    )  # fmt: skip


@dataclass(frozen=True)
class EngineBuild:
    """One engine to build: the model, its profile, and the cache key it will be stored under."""

    model: Path
    onnx: Path
    profile: Profile
    options: BuildOptions
    target: BuildTarget
    key: EngineKey

    @property
    def name(self) -> str:
        return self.model.name


def _onnx_of(model: Path) -> Path:
    versions = sorted(
        (p for p in model.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name)
    )
    found = [v / "model.onnx" for v in versions if (v / "model.onnx").is_file()]
    if not found:
        raise UsageError(
            f"{model}: no <version>/model.onnx to build a TensorRT engine from",
            hint="point tdk build at an ONNX model directory (config.pbtxt and 1/model.onnx)",
        )
    return found[-1]


def engine_build(model: Path, target: BuildTarget, options: BuildOptions) -> EngineBuild:
    """The build of ``model`` for ``target``; a UsageError names a missing config, ONNX file,
    shape range or unknown hardware-compatibility level."""
    if options.hardware not in HARDWARE_LEVELS:
        raise UsageError(
            f"--hardware-compatibility {options.hardware!r} is not a level tdk builds",
            hint="use ampere+ (or leave it out for the target GPU only)",
        )
    if options.hardware and target.compute < (8, 0):
        raise UsageError(
            f"--hardware-compatibility ampere+ cannot serve {target.gpu} (compute capability "
            f"{target.compute[0]}.{target.compute[1]}): it needs Ampere (8.0) or later",
            hint="leave --hardware-compatibility out",
        )
    config_path = model / CONFIG_NAME
    if not config_path.is_file():
        raise UsageError(
            f"{model}: no {CONFIG_NAME}; the engine's profile comes from its inputs and "
            "max_batch_size",
            hint="write the model's config.pbtxt first (tdk import writes one)",
        )
    onnx = _onnx_of(model)
    profile = profile_from_config(
        load_config(config_path), list(options.shapes), options.opt_batch, str(config_path)
    )
    check_limits(onnx, profile)
    compute = options.hardware or f"{target.compute[0]}.{target.compute[1]}"
    key = EngineKey(
        sha256_file(onnx), target.tensorrt_key, compute, profile.describe(), options.precision
    )
    return EngineBuild(model, onnx, profile, options, target, key)


def check_limits(onnx: Path, profile: Profile) -> None:
    """A UsageError when the profile's MAX (or OPT) of a dimension exceeds what the graph
    itself can take (``packager.onnx_limits``: the position table it slices)."""
    from packager.onnx_limits import dim_limits
    from packager.onnx_signature import read_graph

    shapes = {tensor.name: tensor for tensor in profile.inputs}
    for limit in dim_limits(read_graph(onnx)):
        tensor = shapes.get(limit.name)
        if tensor is None or limit.axis >= len(tensor.max) or tensor.max[limit.axis] <= limit.most:
            continue
        low, opt, top = (getattr(tensor, w)[limit.axis] for w in ("min", "opt", "max"))
        raise UsageError(
            f"--shape {limit.name}: {top} is beyond what {onnx} takes in that dimension "
            f"(at most {limit.most}: the rows of its table {limit.table!r}, sliced up to it)",
            hint=f"keep MIN,OPT,MAX within {limit.most}, e.g. --shape "
            f"{limit.name}:{min(low, limit.most)},{min(opt, limit.most)},{limit.most}",
        )


def _session(onnx: Path) -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise UsageError(
            "tdk build compares the engine with ONNX Runtime, which is not installed",
            hint="in the kit's clone: `make extra EXTRA=build` (onnxruntime)",
        ) from None
    return onnxruntime.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])


def parity_inputs(
    session: Any, shapes: dict[str, tuple[int, ...]], seed: int = 0
) -> dict[str, np.ndarray]:
    """Inputs at ``shapes`` (the profile's opt; an input's own static shape otherwise):
    floats from a normal distribution; integers 0 or 1, which index any table of two or
    more rows (token ids, token types) and are valid masks."""
    rng = np.random.default_rng(seed)
    found: dict[str, np.ndarray] = {}
    for spec in session.get_inputs():
        shape = shapes.get(spec.name) or tuple(d if isinstance(d, int) else 1 for d in spec.shape)
        dtype = _DTYPES.get(spec.type)
        if dtype is None:
            raise UsageError(
                f"input {spec.name!r} is {spec.type}: trtexec cannot load it from a file",
                hint="build engines for models with numeric inputs",
            )
        if np.issubdtype(dtype, np.floating):
            found[spec.name] = rng.standard_normal(shape).astype(dtype)
        else:
            found[spec.name] = rng.integers(0, 2, shape).astype(dtype)
    return found


def stage(build: EngineBuild, work: Path, release: str | None = None) -> dict[str, Any]:
    """Write the work directory of ``build`` into ``work``; returns its build.json.

    ``release``: the TensorRT container release the record will name (default: the target's;
    "" where the builder is not that container, as with ``--local``)."""
    (work / "inputs").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(build.onnx, work / "model.onnx")
    shutil.copyfile(POD_SCRIPT, work / POD_SCRIPT.name)
    session = _session(build.onnx)
    inputs = parity_inputs(session, build.profile.at("opt"))
    names = [o.name for o in session.get_outputs()]
    try:
        outputs = session.run(names, inputs)
    except Exception as exc:  # onnxruntime's own error types (Fail, InvalidArgument, ...)
        shapes = ", ".join(f"{n} {list(a.shape)}" for n, a in inputs.items())
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"ONNX Runtime cannot run {build.onnx} at the profile's OPT shapes ({shapes}): {first}",
            hint="give --shape values the model takes (its config.pbtxt and its graph)",
        ) from None
    np.savez(work / "reference.npz", **dict(zip(names, outputs, strict=True)))
    loads = []
    for index, (name, array) in enumerate(inputs.items()):
        array.tofile(work / "inputs" / f"{index}.bin")
        loads.append(f"'{name}':inputs/{index}.bin")
    spec = build_spec(build, loads, {name: a.shape for name, a in inputs.items()})
    if release is not None:
        spec["release"] = release
    (work / "build.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    return spec


def build_spec(
    build: EngineBuild, loads: list[str], shapes: dict[str, tuple[int, ...]]
) -> dict[str, Any]:
    """build.json: trtexec's build and run arguments (paths relative to the work directory),
    the tolerance, the key and what the record says the engine was built for."""
    options = build.options
    build_args = ["--onnx=model.onnx", "--saveEngine=model.plan", *build.profile.trtexec_args()]
    if options.fp16:
        build_args.append("--fp16")
    if options.hardware:
        build_args.append(f"--hardwareCompatibilityLevel={options.hardware}")
    build_args.append("--skipInference")
    run_args = ["--loadEngine=model.plan", f"--loadInputs={','.join(loads)}"]
    if build.profile.inputs:
        dims = ",".join(f"'{n}':{'x'.join(str(d) for d in s)}" for n, s in shapes.items())
        run_args.append(f"--shapes={dims}")
    run_args += ["--exportOutput=outputs.json", "--iterations=1", "--warmUp=0", "--duration=0"]
    atol, rtol = options.tolerance()
    return {
        "build_args": build_args,
        "run_args": run_args,
        "atol": atol,
        "rtol": rtol,
        "key": asdict(build.key),
        "hardware": options.hardware,
        "release": build.target.container_release,
    }

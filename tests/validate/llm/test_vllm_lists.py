"""The vLLM EngineArgs lists per version: generated from the releases' wheels, one for every
vLLM a Triton vllm image ships, each with its source; the generator reads a wheel's fields."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from infra.facts.llm import VLLM_VERSIONS
from packager.validate.engines import args
from packager.validate.engines.vllm_argsgen import read_wheel, render

LISTS = args.generated_table("vllm_lists.json")


def test_every_image_vllm_has_a_recorded_list_with_its_source() -> None:
    assert LISTS["checked"] == "2026-11-27"
    versions = LISTS["versions"]
    # 25.06/25.07 ship NVIDIA's build of 0.9.0rc1, which PyPI does not carry: TDK613 there
    assert set(VLLM_VERSIONS.values()) - {"0.9.0rc1"} <= set(versions)
    assert set(versions) == set(args.VLLM_VALUES)
    for version, row in versions.items():
        wheel, sha256, names = row["wheel"], row["sha256"], row["names"]
        assert wheel.startswith(f"vllm-{version}-") and wheel.endswith(".whl")
        assert re.fullmatch(r"[0-9a-f]{64}", sha256)
        listed = set(names)
        assert {"model", "tensor_parallel_size", "gpu_memory_utilization"} <= listed, version
        found = args.VLLM_LISTS[version]
        assert found.names == listed and f"pypi.org/project/vllm/{version}/" in found.source


def test_generator_reads_the_engine_dataclasses(tmp_path: Path) -> None:
    source = (
        "class EngineArgs:\n    model: str = 'x'\n    seed: int = 0\n    def f(self): pass\n"
        "class AsyncEngineArgs(EngineArgs):\n    enable_log_requests: bool = False\n"
        "class Other:\n    not_an_arg: int = 1\n"
    )
    wheel = tmp_path / "vllm-9.9.9-cp38-abi3-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("vllm/engine/arg_utils.py", source)
    row = read_wheel(wheel)
    assert row.version == "9.9.9" and row.names == ("model", "seed", "enable_log_requests")
    ((generated),) = json.loads(render([row], "2026-11-26"))["versions"].values()
    assert generated == {"wheel": wheel.name, "sha256": row.sha256, "names": list(row.names)}


VALUES_SOURCE = {
    "vllm/config/model.py": (
        'ModelDType = Literal["auto", "half"]\n'
        "class ModelConfig:\n    max_model_len: int = Field(default=None, ge=1)\n"
    ),
    "vllm/config/cache.py": (
        "class CacheConfig:\n    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)\n"
    ),
    "vllm/engine/arg_utils.py": (
        "class EngineArgs:\n    model: str = 'x'\n    dtype: ModelDType = 'auto'\n"
        "    max_model_len: int | None = None\n    gpu_memory_utilization: float = 0.9\n"
        "    kv_cache_dtype: str = 'auto'\n    device: torch.device | None = None\n"
        "def add_cli_args(parser):\n"
        "    parser.add_argument('--kv-cache-dtype', choices=['auto', 'fp8'])\n"
    ),
}


def test_values_generator_reads_literals_fields_and_cli_choices(tmp_path: Path) -> None:
    from packager.validate.engines.vllm_argsgen import render_values

    wheel = tmp_path / "vllm-9.9.9-cp38-abi3-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in VALUES_SOURCE.items():
            archive.writestr(name, text)
    ((generated),) = json.loads(render_values([wheel], "2026-11-27"))["versions"].values()
    found = args.values_of(generated["arguments"])
    assert found["model"] == args.ArgValue(frozenset({"str"}), (), ())
    assert found["dtype"].choices == ("auto", "half") and not found["dtype"].kinds
    assert found["max_model_len"].bounds == (("ge", 1.0),)
    assert found["gpu_memory_utilization"].bounds == (("gt", 0.0), ("le", 1.0))
    assert found["kv_cache_dtype"].choices == ("auto", "fp8")
    assert found["device"].kinds == {"any"}


LOWERS = "class C:\n    def f(self):\n        self.quantization = self.quantization.lower()\n"
#: version -> (the quantization package's list, the annotation, the config module)
QUANTIZATION_SHAPES = {
    "9.9.1": (
        'QuantizationMethods = Literal["awq", "fp8"]\n',
        "QuantizationMethods | str | None",
        "",
    ),
    "9.9.2": ('QUANTIZATION_METHODS: List[str] = ["awq", "gptq"]\n', "Optional[str]", LOWERS),
    "9.9.3": ('_QUANTIZATION_CONFIG_REGISTRY = {"awq": A, "marlin": M}\n', "Optional[str]", ""),
}


def _quantization_wheel(tmp_path: Path, version: str) -> Path:
    methods, annotation, config = QUANTIZATION_SHAPES[version]
    wheel = tmp_path / f"vllm-{version}-cp38-abi3-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        engine = f"class EngineArgs:\n    model: str = 'x'\n    quantization: {annotation} = None\n"
        archive.writestr("vllm/engine/arg_utils.py", engine)
        archive.writestr("vllm/model_executor/layers/quantization/__init__.py", methods)
        archive.writestr("vllm/config/model.py", config)
    return wheel


def test_values_generator_reads_each_releases_quantization_methods(tmp_path: Path) -> None:
    """Issue 38 item 3: the methods list in its three shapes (a Literal alias from 0.9, a list
    in 0.6-0.8, a registry dict's keys in 0.4-0.5), the plugin ``| str`` dropped, and whether the
    release lowercases the value (``self.quantization.lower()``, up to 0.9.0.1)."""
    from packager.validate.engines.vllm_argsgen import render_values

    wheels = [_quantization_wheel(tmp_path, version) for version in QUANTIZATION_SHAPES]
    table = json.loads(render_values(wheels, "2026-11-27"))["versions"]
    found = {v: args.values_of(row["arguments"])["quantization"] for v, row in table.items()}
    assert found["9.9.1"] == args.ArgValue(frozenset({"none"}), ("awq", "fp8"), ())
    assert found["9.9.2"].choices == ("awq", "gptq")
    assert found["9.9.2"].kinds == {"none", "lowercased"}
    assert found["9.9.3"].choices == ("awq", "marlin")
    assert not args.value_problem("AWQ", found["9.9.2"])  # that release lowercases it
    assert args.value_problem("AWQ", found["9.9.1"]) and args.value_problem("awqq", found["9.9.2"])

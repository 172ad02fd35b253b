"""TensorRT-LLM ``LLM()`` names and allowed values per release (issue 48 item 3): generated
from the versioned sources into ``trtllm_args.json``, and a ``model.yaml`` whose ``backend``
or name the image's release refuses is refused by validate and the feasibility path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.facts.llm import TRTLLM_VERSIONS, release_key, trtllm_version, vllm_version
from packager.validate.engines import args
from packager.validate.engines.args import VllmImage
from packager.validate.engines.trtllm_argsgen import read_args, read_backends, release_entry, render
from packager.validate.runner import validate_paths
from tests.validate.llm import corpus as c

TABLE = Path(args.__file__).with_name("trtllm_args.json")
HELD_OUT = Path(__file__).with_name("heldout") / "llmapi_wrong_backend"

ARGS_SOURCE = """
class LoadFormat(Enum):
    AUTO = 0
    DUMMY = 1
class BaseLlmArgs(StrictBaseModel):
    model: str = Field()
    tokenizer_mode: Literal['auto', 'slow'] = Field(default='auto')
    load_format: Literal['auto', 'dummy'] = Field(default='auto')
    mpi_session: Optional[object] = Field(default=None, alias="_mpi_session")
    backend: Optional[str] = Field(default=None)
    _private: int = PrivateAttr(default=0)
class TrtLlmArgs(BaseLlmArgs):
    build_only_here: int = 1
class TorchLlmArgs(BaseLlmArgs):
    sampler_type: Union[str, SamplerType] = Field(default='auto')
    load_format: Union[str, LoadFormat] = Field(default=LoadFormat.AUTO)
    @field_validator('load_format', mode='before')
    def convert_load_format(cls, v):
        if v.upper() not in LoadFormat.__members__:
            raise ValueError(v)
        return LoadFormat[v.upper()]
"""
LLM_SOURCE = """
class BaseLLM:
    def __init__(self, model, **kwargs):
        backend = kwargs.get('backend', None)
        if backend == "pytorch":
            cls = TorchLlmArgs
        elif backend == '_autodeploy':
            cls = AutoDeployLlmArgs
        else:
            cls = TrtLlmArgs
"""


def test_generator_reads_fields_literals_enum_validators_and_backends(tmp_path: Path) -> None:
    names, choices = read_args(ARGS_SOURCE)
    assert names == ("model", "tokenizer_mode", "load_format", "mpi_session", "_mpi_session",
                     "backend", "sampler_type")  # fmt: skip
    assert choices["tokenizer_mode"] == choices["tokenizer_mode"].__class__(("auto", "slow"))
    # TorchLlmArgs re-declares load_format: an Enum its validator matches after .upper()
    assert choices["load_format"].values == ("auto", "dummy") and choices["load_format"].any_case
    assert "sampler_type" not in choices  # a plain str is accepted
    assert read_backends(LLM_SOURCE) == ("pytorch", "_autodeploy")
    (tmp_path / "a.py").write_text(ARGS_SOURCE)
    (tmp_path / "l.py").write_text(LLM_SOURCE)
    entry = release_entry(tmp_path / "a.py", "https://x/a", tmp_path / "l.py", "https://x/l")
    assert entry["choices"]["backend"] == {"values": ["pytorch", "_autodeploy"], "any_case": False}
    assert "build_only_here" not in entry["names"] and "_private" not in entry["names"]
    assert [s["url"] for s in entry["sources"]] == ["https://x/a", "https://x/l"]
    table = json.loads(render({"9.9.9": entry}, "2026-12-07"))
    assert table["releases"]["9.9.9"] == entry and table["read"] == "2026-12-07"


def test_the_committed_table_is_the_generators_output_with_its_sources() -> None:
    """A hand edit of the JSON (or a generator whose format drifted) fails here."""
    table = json.loads(TABLE.read_text())
    assert TABLE.read_text() == render(table["releases"], table["read"])
    assert table["read"] == "2026-12-07"
    for version, entry in table["releases"].items():
        urls = [s["url"] for s in entry["sources"]]
        assert all(f"/{version}/_modules/tensorrt_llm/llmapi/" in u for u in urls), urls
        assert all(re.fullmatch(r"[0-9a-f]{64}", s["sha256"]) for s in entry["sources"])
        names = set(entry["names"])
        assert {"model", "backend", "tensor_parallel_size", "kv_cache_config"} <= names
        assert "pytorch" in entry["choices"]["backend"]["values"]
    # every TensorRT-LLM an image from 25.12 on ships (1.1.0, 1.2.0, 1.2.1) has its own list
    shipped = {v for r, v in TRTLLM_VERSIONS.items() if release_key(r) >= (25, 12)}
    assert shipped == {"1.1.0", "1.2.0", "1.2.1"}
    assert shipped <= set(table["releases"]) and shipped <= set(args.TRTLLM_LISTS)


def _trt(release: str) -> VllmImage:
    return VllmImage(release, vllm_version(release), trtllm_version(release))


RECORDED = sorted(r for r, v in TRTLLM_VERSIONS.items() if v in args.TRTLLM_LISTS)
#: every release from 25.12 on that tdk knows (TensorRT-LLM 1.1.0-1.2.1, and 26.08-26.10
#: whose TensorRT-LLM no checked source states)
FROM_25_12 = sorted(
    {r for r in TRTLLM_VERSIONS if release_key(r) >= (25, 12)} | {"26.08", "26.09", "26.10"},
    key=release_key,
)


@pytest.mark.parametrize("release", FROM_25_12)
def test_held_out_wrong_backend_is_refused_on_every_image_from_25_12(release: str) -> None:
    found = validate_paths([HELD_OUT], _trt(release))
    (refused,) = [f for f in found if f.field == "model.yaml backend"]
    assert refused.code == "TDK605" and refused.severity == "error", refused
    assert "'pytorchh'" in refused.message and "'pytorch', '_autodeploy'" in refused.message
    assert "llm.html" in refused.message  # the source it was read from
    own = trtllm_version(release)
    if own in args.TRTLLM_LISTS:
        assert f"TensorRT-LLM {own} LLM()" in refused.message
    else:  # checked against the newest recorded release, and said so
        (said,) = [f for f in found if f.code == "TDK613"]
        assert f"TensorRT-LLM {args.NEWEST_TRTLLM} LLM()" in refused.message, said


@pytest.mark.parametrize("release", RECORDED)
def test_the_llm_api_sample_passes_on_every_recorded_image(tmp_path: Path, release: str) -> None:
    found = validate_paths([c.llm_api_repo(tmp_path)], _trt(release))
    assert [f for f in found if f.severity == "error" or f.code == "TDK613"] == []


def test_a_mistyped_name_and_a_bad_load_format_name_the_allowed_ones(tmp_path: Path) -> None:
    text = c.LLM_API_YAML + "tensor_paralel_size: 2\nload_format: safetensors\n"
    found = validate_paths([c.llm_api_repo(tmp_path, text)], _trt("26.05"))
    errors = {f.field: f for f in found if f.severity == "error"}
    assert errors["model.yaml tensor_paralel_size"].code == "TDK603"
    typo, fmt = errors["model.yaml tensor_paralel_size"], errors["model.yaml load_format"]
    assert "did you mean 'tensor_parallel_size'" in typo.message
    assert "'auto', 'dummy', 'vision_only' (in any case)" in fmt.message
    ok = c.LLM_API_YAML + "load_format: DUMMY\n"
    assert not [f for f in validate_paths([c.llm_api_repo(tmp_path / "ok", ok)], _trt("26.05"))
                if f.severity == "error"]  # fmt: skip


def test_validate_target_refuses_the_held_out_repository_through_feasibility() -> None:
    where = ["--target", "gke", "--gpu", "nvidia-l4", "--image", "26.05", "--json"]
    result = CliRunner().invoke(app, ["validate", str(HELD_OUT), *where])
    assert result.exit_code == 1, result.output
    findings, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("[") :])
    refused = [f for f in findings if f["field"] == "model.yaml backend"]
    assert [f["code"] for f in refused] == ["TDK605"], findings

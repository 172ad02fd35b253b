# ruff: noqa: E501  (the variant tables keep one case per line)
"""The LLM corpus through ``tdk validate``'s runner: the real shapes are accepted, every broken
variant of issue 26 is refused with its rule and reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra.facts.llm import vllm_version as llm_version
from packager.validate.engines import args
from packager.validate.engines.args import VllmImage
from packager.validate.findings import Finding
from packager.validate.rules import ENGINE_CODES, RULES
from packager.validate.runner import validate_paths
from tests.validate.llm import corpus as c


def _findings(repo: Path, image: VllmImage | None = None) -> list[Finding]:
    return validate_paths([repo], image)


def _errors(repo: Path) -> dict[str, str]:
    return {f.code: f.message for f in _findings(repo) if f.severity == "error"}


def _codes(repo: Path) -> set[str]:
    return {f.code for f in _findings(repo)}


def test_vllm_sample_is_valid_and_warns_about_the_hub_download(tmp_path: Path) -> None:
    found = _findings(c.vllm_repo(tmp_path))
    assert [f.code for f in found if f.severity == "error"] == []
    warned = [f for f in found if f.code == "TDK610"]
    assert warned and "facebook/opt-125m" in warned[0].message and "sha256" in warned[0].message


def test_vllm_local_weights_give_no_download_warning(tmp_path: Path) -> None:
    args = dict(c.VLLM_ARGS, model="weights")
    repo = c.vllm_repo(tmp_path, args=args, extra={"1/weights/config.json": "{}"})
    assert "TDK610" not in _codes(repo)


def test_vllm_config_is_auto_completed_before_the_other_rules(tmp_path: Path) -> None:
    """The backend adds decoupled, max_batch_size 0 and its tensors: a dynamic_batching block
    then meets Triton's own rule (TDK302: max_batch_size 0 never batches)."""
    config = c.VLLM_CONFIG + "dynamic_batching { }\n"
    assert "TDK302" in _codes(c.vllm_repo(tmp_path, config=config))


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ("{not json", "TDK602", "not valid JSON"),
        ("[1, 2]", "TDK602", "not a JSON object"),
        (dict(c.VLLM_ARGS, gpu_memory_utilisation=0.5), "TDK603", "did you mean 'gpu_memory_utilization'"),
        (dict(c.VLLM_ARGS, gpu_memory_utilization=1.5), "TDK605", "(0, 1]"),
        (dict(c.VLLM_ARGS, gpu_memory_utilization=0), "TDK605", "(0, 1]"),
        (dict(c.VLLM_ARGS, tensor_parallel_size=0), "TDK605", "whole number"),
    ],
)  # fmt: skip
def test_vllm_broken_model_json(tmp_path: Path, args: object, code: str, words: str) -> None:
    errors = _errors(c.vllm_repo(tmp_path, args=args))  # type: ignore[arg-type]
    assert code in errors and words in errors[code]


def test_vllm_unknown_argument_without_near_miss_is_a_warning(tmp_path: Path) -> None:
    found = _findings(c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, brand_new_knob=1)))
    assert [f.severity for f in found if f.code == "TDK604"] == ["warning"]


def test_vllm_missing_model_json(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path, extra={"1/README": "no engine args here"})
    (repo / "vllm_model" / "1" / "model.json").unlink()
    errors = _errors(repo)
    assert "model.json is missing" in errors["TDK602"]


def test_vllm_multi_gpu_needs_kind_model(tmp_path: Path) -> None:
    gpu = c.VLLM_CONFIG.replace("KIND_MODEL", "KIND_GPU")
    args = dict(c.VLLM_ARGS, tensor_parallel_size=2)
    assert "KIND_GPU is currently for single-GPU models" in _errors(
        c.vllm_repo(tmp_path / "a", config=gpu, args=args)
    ).get("TDK606", "")
    assert "TDK606" not in _codes(c.vllm_repo(tmp_path / "b", args=args))
    no_group = 'backend: "vllm"\n'
    assert "TDK606" in _errors(c.vllm_repo(tmp_path / "c", config=no_group, args=args))


def test_vllm_two_instances_over_one_gpu(tmp_path: Path) -> None:
    two = c.VLLM_CONFIG.replace("count: 1", "count: 2")
    args = dict(c.VLLM_ARGS, gpu_memory_utilization=0.6)
    assert (
        "1.20 of the GPU" in _errors(c.vllm_repo(tmp_path / "a", config=two, args=args))["TDK607"]
    )
    fits = dict(c.VLLM_ARGS, gpu_memory_utilization=0.45)
    assert "TDK607" not in _codes(c.vllm_repo(tmp_path / "b", config=two, args=fits))


def test_vllm_two_instances_default_utilization_oversubscribes(tmp_path: Path) -> None:
    two = c.VLLM_CONFIG.replace("count: 1", "count: 2")
    args = {k: v for k, v in c.VLLM_ARGS.items() if k != "gpu_memory_utilization"}
    assert "TDK607" in _errors(c.vllm_repo(tmp_path, config=two, args=args))


@pytest.mark.parametrize(
    "extra",
    ["model_transaction_policy { decoupled: false }\n", "max_batch_size: 8\n"],
)
def test_vllm_config_contradicting_the_backend(tmp_path: Path, extra: str) -> None:
    assert "TDK608" in _errors(c.vllm_repo(tmp_path, config=c.VLLM_CONFIG + extra))


def test_vllm_explicit_decoupled_true_is_fine(tmp_path: Path) -> None:
    config = c.VLLM_CONFIG + "model_transaction_policy { decoupled: true }\n"
    assert "TDK608" not in _codes(c.vllm_repo(tmp_path, config=config))


def test_vllm_lora(tmp_path: Path) -> None:
    lora = dict(c.VLLM_ARGS, enable_lora=True)
    missing = _errors(c.vllm_repo(tmp_path / "a", args=lora))
    assert "multi_lora.json is missing" in missing["TDK609"]
    bad = {"1/multi_lora.json": json.dumps({"doc": 3})}
    assert "TDK609" in _errors(c.vllm_repo(tmp_path / "b", args=lora, extra=bad))
    good = {"1/multi_lora.json": json.dumps({"doc": "/loras/doc"})}
    assert "TDK609" not in _codes(c.vllm_repo(tmp_path / "c", args=lora, extra=good))


def test_llm_api_model_is_valid(tmp_path: Path) -> None:
    found = _findings(c.llm_api_repo(tmp_path))
    assert [f.code for f in found if f.severity == "error"] == []
    assert "TDK610" in {f.code for f in found}


@pytest.mark.parametrize(
    ("yaml_text", "code", "words"),
    [
        ("model: [unclosed", "TDK602", "not valid YAML"),
        (c.LLM_API_YAML.replace("tensor_parallel_size", "tensor_paralel_size"), "TDK603", "did you mean 'tensor_parallel_size'"),
        (c.LLM_API_YAML.replace("pipeline_parallel_size: 1", "pipeline_parallel_size: -2"), "TDK605", "whole number"),
    ],
)  # fmt: skip
def test_llm_api_broken_model_yaml(tmp_path: Path, yaml_text: str, code: str, words: str) -> None:
    errors = _errors(c.llm_api_repo(tmp_path, yaml_text))
    assert code in errors and words in errors[code]


def test_unfilled_template_names_placeholders_and_the_tool(tmp_path: Path) -> None:
    found = [f for f in _findings(c.trtllm_repo(tmp_path, c.TRTLLM_TEMPLATE)) if f.code == "TDK601"]
    assert len(found) == 1
    assert "${triton_max_batch_size}" in found[0].message and "${engine_dir}" in found[0].message
    assert "fill_template.py" in found[0].fix and "TDK102" not in _codes(tmp_path)


def test_placeholder_inside_a_string_is_refused_too(tmp_path: Path) -> None:
    config = c.TRTLLM_FILLED.replace('string_value: "1"', 'string_value: "${engine_dir}"')
    assert "${engine_dir}" in _errors(c.trtllm_repo(tmp_path, config))["TDK601"]


def test_filled_engine_model_is_valid(tmp_path: Path) -> None:
    assert _errors(c.trtllm_repo(tmp_path)) == {}


def test_engine_config_json_against_config_pbtxt(tmp_path: Path) -> None:
    small = {"1/config.json": c.engine_config(max_batch=4), "1/rank0.engine": "x"}
    assert "exceeds the engine's 4" in _errors(c.trtllm_repo(tmp_path / "a", files=small))["TDK611"]
    ranks = {"1/config.json": c.engine_config(tp=2), "1/rank0.engine": "x"}
    assert "rank1.engine" in _errors(c.trtllm_repo(tmp_path / "b", files=ranks))["TDK611"]
    long_input = c.TRTLLM_FILLED.replace("dims: [ -1 ] }", "dims: [ 4096 ] }", 1)
    assert "max_input_len is 1024" in _errors(c.trtllm_repo(tmp_path / "d", long_input))["TDK611"]
    broken = {"1/config.json": "{", "1/rank0.engine": "x"}
    assert "TDK602" in _errors(c.trtllm_repo(tmp_path / "c", files=broken))


def test_every_engine_rule_is_exercised_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert ENGINE_CODES and all(f'"{code}"' in source for code in ENGINE_CODES)
    assert all(RULES[code].source.startswith("https://") for code in ENGINE_CODES)


def test_placeholder_in_a_comment_is_not_a_template(tmp_path: Path) -> None:
    config = "# filled from ${engine_dir} by fill_template.py\n" + c.TRTLLM_FILLED
    config = config.replace('string_value: "1"', 'string_value: "1" # was ${engine_dir}')
    assert "TDK601" not in _codes(c.trtllm_repo(tmp_path, config))


def test_filled_inflight_batcher_ensemble_is_valid(tmp_path: Path) -> None:
    found = _findings(c.inflight_batcher_repo(tmp_path))
    assert [f"{f.model}: {f.code} {f.message}" for f in found if f.severity == "error"] == []


def test_inflight_batcher_templates_are_refused_each(tmp_path: Path) -> None:
    found = [
        f for f in _findings(c.inflight_batcher_repo(tmp_path, template=True)) if f.code == "TDK601"
    ]
    assert sorted(Path(f.file).parent.name for f in found) == sorted(c.IFB_MODELS)
    assert all("${triton_max_batch_size}" in f.message for f in found)


@pytest.mark.parametrize(
    ("tensor", "bad"),
    [
        ('input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]', False),
        ('output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]', False),
        ('input [ { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true } ]', False),
        ('input [ { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] } ]', True),
        ('input [ { name: "text_input" data_type: TYPE_INT32 dims: [ 1 ] } ]', True),
        ('input [ { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] } ]', True),
        ('output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]', True),
    ],
)
def test_vllm_declared_tensors_must_agree_with_the_backend(
    tmp_path: Path, tensor: str, bad: bool
) -> None:
    codes = _codes(c.vllm_repo(tmp_path, config=c.VLLM_CONFIG + tensor + "\n"))
    assert ("TDK612" in codes) is bad


def test_vllm_names_are_checked_against_the_targets_image(tmp_path: Path) -> None:
    """The image's vLLM decides the list; a version without a recorded list, or an image whose
    vLLM no source names, is a warning naming the version checked against (never silent)."""
    repo = c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, gpu_memory_utilisation=0.5))
    recorded = _findings(repo, VllmImage("25.09", "0.10.1.1"))
    assert "TDK613" not in {f.code for f in recorded}
    assert "vLLM 0.10.1.1 EngineArgs" in next(f.message for f in recorded if f.code == "TDK603")
    assert "TDK613" not in _codes(repo)  # no target: nothing to compare with
    newer = [f for f in _findings(repo, VllmImage("27.01", "0.99.1")) if f.code == "TDK613"]
    assert [f.severity for f in newer] == ["warning"]
    assert "vLLM 0.99.1" in newer[0].message and "checked against vLLM 0.7" in newer[0].message
    unknown = [f for f in _findings(repo, VllmImage("26.05", None)) if f.code == "TDK613"]
    assert "26.05-vllm-python-py3" in unknown[0].message and "not recorded" in unknown[0].message


def test_an_argument_new_in_the_images_vllm_is_accepted(tmp_path: Path) -> None:
    """data_parallel_size is an EngineArgs field of vLLM 0.10.1.1 (25.09), not of 0.7."""
    repo = c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, data_parallel_size=1))
    assert "TDK604" in _codes(repo)
    assert "TDK604" not in {f.code for f in _findings(repo, VllmImage("25.09", "0.10.1.1"))}


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        (True, "remove 'disable_log_requests' (enable_log_requests defaults to false"),
        ("true", "remove 'disable_log_requests' (enable_log_requests defaults to false"),
        (False, 'replace it with "enable_log_requests": true'),
    ],
)
def test_disable_log_requests_fix_says_the_inverse(tmp_path: Path, value: object, fix: str) -> None:
    """vLLM 0.10 replaced disable_log_requests by enable_log_requests (its negation): renaming
    the key as a near-miss hint would flip its meaning; the fix must invert the value."""
    repo = c.vllm_repo(tmp_path, args=dict(c.VLLM_ARGS, disable_log_requests=value))
    found = _findings(repo, VllmImage("25.09", "0.10.1.1"))
    (renamed,) = [f for f in found if f.field == "model.json disable_log_requests"]
    assert renamed.code == "TDK603" and renamed.severity == "error"
    assert renamed.fix.startswith(fix) and "rename" not in renamed.fix
    assert "negation" in renamed.message and "v0.10.1.1/vllm/engine/arg_utils.py" in renamed.message
    # vLLM 0.7 (the 25.03 image, and the fallback with no target) still takes it
    assert "TDK603" not in {f.code for f in _findings(repo, VllmImage("25.03", "0.7.3"))}
    assert "TDK603" not in _codes(repo)


def test_the_fallback_list_is_the_generated_one() -> None:
    """One source of truth: the fallback is a wheel-read row of vllm_lists.json."""
    versions = args.generated_table("vllm_lists.json")["versions"]
    assert args.VLLM_FALLBACK.version in versions
    assert args.VLLM_FALLBACK is args.VLLM_LISTS[args.VLLM_FALLBACK.version]
    assert set(args.VLLM_LISTS) == set(versions)


@pytest.mark.parametrize(
    ("extra", "field", "said"),
    [
        ({"model": ["x"]}, "model", "a string"),
        ({"max_num_seqs": -3}, "max_num_seqs", ">= 1"),
        ({"dtype": 5}, "dtype", "'bfloat16'"),
        ({"dtype": "fp7"}, "dtype", "'float16'"),
        ({"kv_cache_dtype": "fp9"}, "kv_cache_dtype", "'fp8'"),
        ({"enforce_eager": "maybe"}, "enforce_eager", "true or false"),
    ],
)
@pytest.mark.parametrize("image", [None, "25.09", "26.07"])
def test_vllm_values_of_the_wrong_type_or_range_are_refused(
    tmp_path: Path, extra: dict[str, Any], field: str, said: str, image: str | None
) -> None:
    """Issue 36: only the names were checked; each value now against what that vLLM's
    EngineArgs annotation, Literal choices and config Field bounds accept."""
    repo = c.vllm_repo(tmp_path, args={"model": "/weights", **extra})
    vllm = VllmImage(image, llm_version(image)) if image else None
    found = [f for f in validate_paths([repo], vllm) if f.code == "TDK605"]
    assert [f.field for f in found] == [f"model.json {field}"], found
    assert said in found[0].message and found[0].severity == "error"


def test_vllm_values_it_takes_pass(tmp_path: Path) -> None:
    good = {"model": "/w", "dtype": "bfloat16", "kv_cache_dtype": "fp8", "max_num_seqs": 8,
            "enforce_eager": True, "quantization": "awq", "max_model_len": "4096"}  # fmt: skip
    repo = c.vllm_repo(tmp_path, args=good)
    assert not [f for f in validate_paths([repo]) if f.code == "TDK605"]


@pytest.mark.parametrize(
    ("parameter", "engine_args", "off"),
    [
        (None, {}, False),  # packaging adds REPORT_CUSTOM_METRICS "true"
        ("TRUE", {}, False),  # the backend lowercases it
        ("false", {}, True),
        ("maybe", {}, True),
        (None, {"disable_log_stats": True}, True),
        (None, {"disable_log_stats": "false"}, True),  # a non-empty string is true in Python
    ],
)
def test_vllm_metrics_are_read_as_the_backend_reads_them(
    tmp_path: Path, parameter: str | None, engine_args: dict[str, Any], off: bool
) -> None:
    """Issue 36/38: REPORT_CUSTOM_METRICS false or maybe, or disable_log_stats, turn the vllm:
    series off; the kit says so (TDK614) and its placement needs say so (KEDA falls back)."""
    from packager.repository import discover
    from packager.requirements import requirements

    config = c.VLLM_CONFIG
    if parameter is not None:
        config += (
            'parameters: { key: "REPORT_CUSTOM_METRICS" '
            f'value: {{ string_value: "{parameter}" }} }}\n'
        )
    repo = c.vllm_repo(tmp_path, config=config, args={"model": "/w", **engine_args})
    found = [f for f in _findings(repo) if f.code == "TDK614"]
    assert bool(found) is off
    if off:
        assert "KEDA scales" in found[0].message and found[0].severity == "warning"
    [model] = discover(repo)
    assert requirements(model).engine_metrics is not off


@pytest.mark.parametrize(("release", "flagged"), [(None, True), ("26.07", False), ("26.08", True)])
def test_engine_based_trtllm_repositories_are_flagged_after_the_removal(
    tmp_path: Path, release: str | None, flagged: bool
) -> None:
    repo = c.trtllm_repo(tmp_path)
    image = VllmImage(release, None) if release else None
    found = [f for f in _findings(repo, image) if f.code == "TDK615"]
    assert bool(found) is flagged
    if flagged:
        assert "#15763" in found[0].message and "llmapi" in found[0].fix
    llm_api = c.llm_api_repo(tmp_path / "api")
    assert "TDK615" not in {f.code for f in _findings(llm_api)}


@pytest.mark.parametrize("image", [None, "25.09", "26.03", "26.07"])
def test_vllm_quantization_must_be_a_method_that_release_lists(
    tmp_path: Path, image: str | None
) -> None:
    """Issue 38 item 3: ``quantization`` was any string; now one of the methods the release's
    quantization package lists (QuantizationMethods / QUANTIZATION_METHODS in its wheel)."""
    vllm = VllmImage(image, llm_version(image)) if image else None
    repo = c.vllm_repo(tmp_path, args={"model": "/weights", "quantization": "awqq"})
    found = [f for f in validate_paths([repo], vllm) if f.code == "TDK605"]
    assert [f.field for f in found] == ["model.json quantization"], found
    assert "'awq'" in found[0].message and found[0].severity == "error"
    fine = c.vllm_repo(tmp_path / "ok", args={"model": "/weights", "quantization": "fp8"})
    assert not [f for f in validate_paths([fine], vllm) if f.code == "TDK605"]


def test_vllm_quantization_case_follows_the_release(tmp_path: Path) -> None:
    """vLLM up to 0.9.0.1 lowercases ``quantization`` before checking it; later ones do not."""
    repo = c.vllm_repo(tmp_path, args={"model": "/weights", "quantization": "AWQ"})
    old = VllmImage("25.03", llm_version("25.03"))
    new = VllmImage("26.05", llm_version("26.05"))
    assert old.vllm == "0.7.3" and new.vllm == "0.19.0"
    assert not [f for f in validate_paths([repo], old) if f.code == "TDK605"]
    assert [f.field for f in validate_paths([repo], new) if f.code == "TDK605"] == [
        "model.json quantization"
    ]


def test_llm_api_names_on_an_unrecorded_trtllm_say_which_list_was_checked(tmp_path: Path) -> None:
    """Issue 38 item 2 / 48 item 3: where the image's TensorRT-LLM has no recorded LLM() list
    (1.0.3.2510 in 25.11; 1.1.0-1.2.1 of 25.12-26.07 are recorded), the names are checked
    against the newest recorded list with a TDK613 warning naming the image's version."""
    from infra.facts.llm import trtllm_version

    trt = VllmImage("25.11", llm_version("25.11"), trtllm_version("25.11"))
    warned = [f for f in _findings(c.llm_api_repo(tmp_path), trt) if f.code == "TDK613"]
    assert len(warned) == 1 and warned[0].severity == "warning", warned
    assert "ships TensorRT-LLM 1.0.3.2510" in warned[0].message
    assert "trtllm_args.json" in warned[0].message and "1.2.1, the newest" in warned[0].message
    unknown = VllmImage("24.01", None, None)
    said = [f.message for f in _findings(c.llm_api_repo(tmp_path / "u"), unknown)
            if f.code == "TDK613"]  # fmt: skip
    assert len(said) == 1 and "TRTLLM_VERSIONS" in said[0]
    assert "TDK613" not in _codes(c.llm_api_repo(tmp_path / "none"))  # no target: no image

"""Regression set: our own equivalents of public Triton configs (Triton's docs, examples and
tutorials), one per feature. Every one loads in Triton, so `tdk validate` must find no error."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.validate.runner import validate_paths
from tests.validate.helpers import PYTHON_MODEL, make_repo, onnx_model

SEQ_INPUTS = [("INPUT", "FP32", ["batch", 1]), ("START", "INT32", ["batch", 1]),
              ("READY", "INT32", ["batch", 1]), ("CORRID", "UINT64", ["batch", 1])]  # fmt: skip
SEQ_CONTROLS = """
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
"""
IO = """
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] } ]
"""
PY_IO = """
input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""
OUT = [("OUTPUT", "FP32", ["batch", 1])]


def _python(config: str, name: str) -> tuple[str, dict[str, bytes | str]]:
    return f'name: "{name}"\nbackend: "python"\n{config}', {"1/model.py": PYTHON_MODEL}


def _onnx(config: str, name: str, inputs, outputs=OUT) -> tuple[str, dict[str, bytes | str]]:  # type: ignore[no-untyped-def]
    text = f'name: "{name}"\nbackend: "onnxruntime"\n{config}'
    return text, {"1/model.onnx": onnx_model(inputs, outputs)}


CASES = {
    # sequence batcher, direct strategy, graph takes the control tensors (the reported false
    # rejection: "the ONNX graph needs input 'READY', which the config does not declare")
    "sequence-direct": {
        "seq": _onnx(
            f"max_batch_size: 8\n{IO}\nsequence_batching {{\n  direct {{ }}\n  "
            f"max_sequence_idle_microseconds: 5000000\n{SEQ_CONTROLS}}}",
            "seq",
            SEQ_INPUTS,
        )
    },
    "sequence-oldest": {
        "seq": _onnx(
            f"max_batch_size: 8\n{IO}\nsequence_batching {{\n  oldest {{ max_candidate_sequences:"
            f" 4 preferred_batch_size: [ 2, 4 ] }}\n{SEQ_CONTROLS}}}",
            "seq",
            SEQ_INPUTS,
        )
    },
    # implicit state: the graph takes INPUT_STATE and returns OUTPUT_STATE
    "implicit-state": {
        "state": _onnx(
            f"""max_batch_size: 4
{IO}
sequence_batching {{
  control_input [ {{ name: "START" control [ {{ kind: CONTROL_SEQUENCE_START
                     int32_false_true: [ 0, 1 ] }} ] }} ]
  state [ {{ input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_FP32
            dims: [ 1 ] initial_state: {{ name: "zeros" data_type: TYPE_FP32 dims: [ 1 ]
            zero_data: true }} }} ]
}}""",
            "state",
            [
                ("INPUT", "FP32", ["b", 1]),
                ("START", "INT32", ["b", 1]),
                ("INPUT_STATE", "FP32", ["b", 1]),
            ],
            [("OUTPUT", "FP32", ["b", 1]), ("OUTPUT_STATE", "FP32", ["b", 1])],
        )
    },
    # decoupled python model streaming to a client
    "decoupled": {
        "stream": _python(
            f"max_batch_size: 0\n{PY_IO}\nmodel_transaction_policy {{ decoupled: true }}\n",
            "stream",
        ),
    },
    # BLS: a python model calling other models needs nothing special in its config
    "bls": {
        "bls": _python(
            f"max_batch_size: 0\n{PY_IO}\ninstance_group [ {{ kind: KIND_CPU count: 2 }} ]\n", "bls"
        ),
    },
    # ragged batching: a ragged input reaches the graph as [-1], with a batch input for offsets
    "ragged": {
        "ragged": _onnx(
            """max_batch_size: 16
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ -1 ] allow_ragged_batch: true } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
batch_input [ { kind: BATCH_ACCUMULATED_ELEMENT_COUNT target_name: "INDEX"
                data_type: TYPE_FP32 source_input: "INPUT" } ]
dynamic_batching { }""",
            "ragged",
            [("INPUT", "FP32", ["n"]), ("INDEX", "FP32", ["b"])],
            [("OUTPUT", "FP32", ["b", "n"])],
        )
    },
    # shape tensors are a TensorRT feature
    "shape-tensor": {
        "trt": (
            """name: "trt"
platform: "tensorrt_plan"
max_batch_size: 8
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ -1 ] },
        { name: "SHAPE" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_GPU count: 1 profile: [ "0" ] } ]""",
            {"1/model.plan": b"\x00plan"},
        )
    },
    # optimization / execution accelerators, CUDA graphs, priority
    "optimization": {
        "opt": _onnx(
            f"""max_batch_size: 8
{IO}
optimization {{
  priority: PRIORITY_MAX
  execution_accelerators {{
    gpu_execution_accelerator [ {{ name: "tensorrt"
      parameters {{ key: "precision_mode" value: "FP16" }} }} ]
    cpu_execution_accelerator [ {{ name: "openvino" }} ]
  }}
  cuda {{ graphs: true }}
  input_pinned_memory {{ enable: true }}
}}
dynamic_batching {{ preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }}""",
            "opt",
            [("INPUT", "FP32", ["batch", 1])],
        )
    },
    "warmup": {
        "warm": _onnx(
            f"""max_batch_size: 8
{IO}
model_warmup [ {{ name: "random" batch_size: 4
  inputs {{ key: "INPUT" value: {{ data_type: TYPE_FP32 dims: [ 1 ] random_data: true }} }} }} ]""",
            "warm",
            [("INPUT", "FP32", ["batch", 1])],
        )
    },
    # warmup of a stateful model supplies the control tensors too (Triton adds them as
    # override inputs of the warmup request)
    "warmup-sequence": {
        "seqwarm": _onnx(
            f"""max_batch_size: 8
{IO}
sequence_batching {{
{SEQ_CONTROLS}}}
model_warmup [ {{ name: "w" batch_size: 1
  inputs {{ key: "INPUT" value: {{ data_type: TYPE_FP32 dims: [ 1 ] zero_data: true }} }}
  inputs {{ key: "START" value: {{ data_type: TYPE_INT32 dims: [ 1 ] zero_data: true }} }}
  inputs {{ key: "READY" value: {{ data_type: TYPE_INT32 dims: [ 1 ] zero_data: true }} }} }} ]""",
            "seqwarm",
            SEQ_INPUTS,
        )
    },
    # no backend or platform: Triton infers them from the first version directory's files
    "backend-inferred": {
        "plan": (
            'name: "plan"\nmax_batch_size: 8\n'
            'input [ { name: "S" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true } ]\n'
            'output [ { name: "O" data_type: TYPE_FP32 dims: [ -1 ] } ]\n',
            {"1/model.plan": b"\x00plan"},
        ),
        "onnx": (
            f'name: "onnx"\nmax_batch_size: 8\n{IO}',
            {"1/model.onnx": onnx_model([("INPUT", "FP32", ["b", 1])], OUT)},
        ),
        "py": (f'name: "py"\nmax_batch_size: 0\n{PY_IO}', {"1/model.py": PYTHON_MODEL}),
    },
    "response-cache": {
        "cached": _onnx(
            f"max_batch_size: 8\n{IO}\nresponse_cache {{ enable: true }}",
            "cached",
            [("INPUT", "FP32", ["batch", 1])],
        )
    },
    "version-policy": {
        "versions": (
            f'name: "versions"\nbackend: "python"\nmax_batch_size: 0\n{PY_IO}\n'
            "version_policy: { specific: { versions: [ 1, 3 ] } }\n",
            {"1/model.py": PYTHON_MODEL, "2/README": "not served", "3/model.py": PYTHON_MODEL},
        ),
        "latest": (
            f'name: "latest"\nbackend: "python"\nmax_batch_size: 0\n{PY_IO}\n'
            "version_policy: { latest: { num_versions: 2 } }\n",
            {"1/model.py": PYTHON_MODEL, "2/model.py": PYTHON_MODEL},
        ),
    },
    # a batching ensemble may contain a non-batching model (Triton: "as long as the expanded
    # shapes are consistent"), and a decoupled step may feed a non-decoupled one
    "ensemble-decoupled-and-unbatched": {
        "pre": _python(
            'max_batch_size: 0\ninput [ { name: "IN" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]\n'
            'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]\n'
            "model_transaction_policy { decoupled: true }\n",
            "pre",
        ),
        "post": _python(
            'max_batch_size: 8\ninput [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
            'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n',
            "post",
        ),
        "pipe": (
            """name: "pipe"
platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [
  { model_name: "pre" model_version: -1 input_map { key: "IN" value: "X" }
    output_map { key: "OUT" value: "mid" } },
  { model_name: "post" model_version: -1 input_map { key: "IN" value: "mid" }
    output_map { key: "OUT" value: "Y" } } ] }""",
            {"1/.keep": ""},
        ),
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_public_config_equivalent_passes(tmp_path: Path, case: str) -> None:
    repo = make_repo(tmp_path / case, CASES[case])
    errors = [f for f in validate_paths([repo]) if f.severity == "error"]
    assert errors == [], "\n".join(str(f) for f in errors)


def test_custom_backend_may_name_any_platform(tmp_path: Path) -> None:
    """Triton checks the platform only for its typed backends (core GetBackendType)."""
    config = f'name: "m"\nbackend: "python"\nplatform: "whatever"\nmax_batch_size: 0\n{PY_IO}'
    repo = make_repo(tmp_path / "r", {"m": (config, {"1/model.py": PYTHON_MODEL})})
    assert [f for f in validate_paths([repo]) if f.severity == "error"] == []


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ('backend: "python"\n', "TDK107"),  # an ensemble has no backend
        ("response_cache { enable: true }\n", None),  # allowed on a plain ensemble
    ],
)
def test_ensemble_backend_and_cache(tmp_path: Path, extra: str, code: str | None) -> None:
    cases = dict(CASES["ensemble-decoupled-and-unbatched"])
    text, files = cases["pipe"]
    cases["pipe"] = (text + "\n" + extra, files)
    cases["pre"] = (cases["pre"][0].replace("decoupled: true", "decoupled: false"), cases["pre"][1])
    repo = make_repo(tmp_path / "r", cases)
    codes = {f.code for f in validate_paths([repo]) if f.severity == "error"}
    assert codes == ({code} if code else set())


def test_scalar_graph_tensors_and_batch_outputs(tmp_path: Path) -> None:
    """onnxruntime backend: a scalar graph tensor takes config dims [1] (batching or not), and
    a batch_output target's shape is not compared with the graph."""
    config = """name: "m"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "SCORE" data_type: TYPE_FP32 dims: [ 1 ] },
         { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 7 ] } ]
batch_output [ { target_name: "OUTPUT" kind: BATCH_SCATTER_WITH_INPUT_SHAPE
                 source_input: "INPUT" } ]
"""
    graph = onnx_model(
        [("INPUT", "FP32", ["b", "n"])], [("SCORE", "FP32", []), ("OUTPUT", "FP32", ["b", "n"])]
    )
    repo = make_repo(tmp_path / "r", {"m": (config, {"1/model.onnx": graph})})
    assert [f for f in validate_paths([repo]) if f.severity == "error"] == []


def test_output_dims_are_compared_exactly(tmp_path: Path) -> None:
    config = f'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 4\n{IO}'
    graph = onnx_model([("INPUT", "FP32", ["b", "n"])], [("OUTPUT", "FP32", ["b", "n"])])
    repo = make_repo(tmp_path / "r", {"m": (config, {"1/model.onnx": graph})})
    findings = [f for f in validate_paths([repo]) if f.severity == "error"]
    assert [(f.code, f.field) for f in findings] == [("TDK506", "output[0] (OUTPUT).dims")]
    assert "variable in the ONNX graph" in findings[0].message


def test_ensemble_of_a_non_batching_step_with_plain_dims(tmp_path: Path) -> None:
    """Core ValidateTensorConsistency accepts [4] (non-batching step) for a batching [4]."""
    cases = dict(CASES["ensemble-decoupled-and-unbatched"])
    pre_text = (
        cases["pre"][0]
        .replace("dims: [ -1, 4 ]", "dims: [ 4 ]")
        .replace("decoupled: true", "decoupled: false")
    )
    cases["pre"] = (pre_text, cases["pre"][1])
    repo = make_repo(tmp_path / "r", cases)
    assert [f for f in validate_paths([repo]) if f.severity == "error"] == []


def test_ensemble_may_return_an_input_it_consumes(tmp_path: Path) -> None:
    cases = dict(CASES["ensemble-decoupled-and-unbatched"])
    text, files = cases["pipe"]
    text = text.replace(
        'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] } ]',
        'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] },\n'
        '         { name: "X" data_type: TYPE_FP32 dims: [ 4 ] } ]',
    )
    cases["pipe"] = (text, files)
    repo = make_repo(tmp_path / "r", cases)
    assert [f for f in validate_paths([repo]) if f.severity == "error"] == []

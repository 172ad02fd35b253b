"""Write the sample Triton model repository, deterministically (fixed seeds, no downloads).

    python model_repos/generate.py --out model_repos/samples

Models: ``text_classifier`` (ONNX, BERT-like I/O), ``image_classifier`` (ONNX CNN),
``tokenizer`` (Python backend) and ``text_pipeline`` (ensemble: tokenizer -> text_classifier);
on request ``ranker`` (``--with ranker``), a dense model whose throughput depends on batching,
``llm`` (``--with llm``), a decoupled text generator with the vLLM backend's tensor names, and
(``--with gpu``) ``gpu_mlp`` (torch on the GPU in the Python backend; torch is imported by the
model only), ``gpu_echo`` (the same tensors, numpy only) and ``gpu_onnx`` (an ONNX MLP on a GPU
instance); ``--kind cpu`` makes them KIND_CPU.
Configs are built as Triton ``ModelConfig`` messages and written with ``dump_config``.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent
if str(ROOT.parent) not in sys.path:  # run as a script: make `packager` importable
    sys.path.insert(0, str(ROOT.parent))

from packager.config import CONFIG_NAME, dump_config, new_config  # noqa: E402

DEFAULT_OUT = ROOT / "samples"
TOKENIZER_SOURCE = ROOT / "sources" / "tokenizer" / "model.py"
LLM_SOURCE = ROOT / "sources" / "llm" / "model.py"
GPU_MLP_SOURCE = ROOT / "sources" / "gpu_mlp" / "model.py"
GPU_ECHO_SOURCE = ROOT / "sources" / "gpu_echo" / "model.py"
GPU_IN, GPU_HIDDEN, GPU_OUT = 64, 1024, 16  # must match model_repos/sources/gpu_mlp/model.py
SEQ_LEN = 128
HIDDEN = 32
VOCAB_SIZE = 1024  # must match model_repos/sources/tokenizer/model.py
NUM_CLASSES = 11
RANKER_FEATURES, RANKER_WIDTH, RANKER_LAYERS = 256, 2048, 3
# Opset 17 / IR 8: run by every onnxruntime since 1.14 and by Triton's onnxruntime backend.
OPSET = 17
IR_VERSION = 8


def _weights(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> TensorProto:
    scale = 1.0 / np.sqrt(shape[0])
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _const(name: str, values: list[int] | list[float], dtype: Any) -> TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="tdk-model-repos",
        producer_version="1",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def text_classifier_onnx(seed: int = 0) -> onnx.ModelProto:
    """Embedding + position, one tanh dense layer, masked mean pooling, tanh pooler."""
    rng = np.random.default_rng(seed)
    f32, i32 = TensorProto.FLOAT, TensorProto.INT32
    n = helper.make_node
    nodes = [
        n("Gather", ["word_embeddings", "token_ids"], ["tok_emb"], axis=0),
        n("Add", ["tok_emb", "position_embeddings"], ["emb"]),
        n("MatMul", ["emb", "dense_w"], ["dense_mm"]),
        n("Add", ["dense_mm", "dense_b"], ["dense_pre"]),
        n("Tanh", ["dense_pre"], ["hidden"]),
        n("Cast", ["attn_mask"], ["mask_f"], to=f32),
        n("Unsqueeze", ["mask_f", "axis_last"], ["mask_3d"]),
        n("Mul", ["hidden", "mask_3d"], ["output"]),
        n("ReduceSum", ["output", "axis_seq"], ["summed"], keepdims=0),
        n("ReduceSum", ["mask_f", "axis_seq"], ["count"], keepdims=1),
        n("Max", ["count", "one"], ["count_safe"]),
        n("Div", ["summed", "count_safe"], ["mean"]),
        n("MatMul", ["mean", "pooler_w"], ["pool_mm"]),
        n("Add", ["pool_mm", "pooler_b"], ["pool_pre"]),
        n("Tanh", ["pool_pre"], ["pooled_output"]),
    ]
    initializers = [
        _weights(rng, "word_embeddings", (VOCAB_SIZE, HIDDEN)),
        _weights(rng, "position_embeddings", (SEQ_LEN, HIDDEN)),
        _weights(rng, "dense_w", (HIDDEN, HIDDEN)),
        _weights(rng, "dense_b", (HIDDEN,)),
        _weights(rng, "pooler_w", (HIDDEN, HIDDEN)),
        _weights(rng, "pooler_b", (HIDDEN,)),
        _const("axis_last", [-1], np.int64),
        _const("axis_seq", [1], np.int64),
        _const("one", [1.0], np.float32),
    ]
    graph = helper.make_graph(
        nodes,
        "text_classifier",
        [
            helper.make_tensor_value_info("token_ids", i32, ["batch", SEQ_LEN]),
            helper.make_tensor_value_info("attn_mask", i32, ["batch", SEQ_LEN]),
        ],
        [
            helper.make_tensor_value_info("output", f32, ["batch", SEQ_LEN, HIDDEN]),
            helper.make_tensor_value_info("pooled_output", f32, ["batch", HIDDEN]),
        ],
        initializers,
    )
    return _model(graph)


def image_classifier_onnx(seed: int = 1) -> onnx.ModelProto:
    """Two strided 3x3 convolutions with ReLU, global average pooling, a dense classifier."""
    rng = np.random.default_rng(seed)
    n = helper.make_node
    conv: dict[str, Any] = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    nodes = [
        n("Conv", ["input", "conv1_w", "conv1_b"], ["c1"], **conv),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "conv2_w", "conv2_b"], ["c2"], **conv),
        n("Relu", ["c2"], ["r2"]),
        n("GlobalAveragePool", ["r2"], ["gap"]),
        n("Flatten", ["gap"], ["features"], axis=1),
        n("Gemm", ["features", "fc_w", "fc_b"], ["logits"], transB=1),
    ]
    initializers = [
        _weights(rng, "conv1_w", (8, 3, 3, 3)),
        _weights(rng, "conv1_b", (8,)),
        _weights(rng, "conv2_w", (16, 8, 3, 3)),
        _weights(rng, "conv2_b", (16,)),
        _weights(rng, "fc_w", (NUM_CLASSES, 16)),
        _weights(rng, "fc_b", (NUM_CLASSES,)),
    ]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "image_classifier",
        [helper.make_tensor_value_info("input", f32, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", f32, ["batch", NUM_CLASSES])],
        initializers,
    )
    return _model(graph)


def ranker_onnx(seed: int = 2) -> onnx.ModelProto:
    """A dense ranking model: RANKER_FEATURES -> RANKER_LAYERS x RANKER_WIDTH (ReLU) -> 1 score.

    Its cost per call is reading its weights (about 13 M parameters) whatever the batch, the
    way dense layers are memory-bound at small batches: batching requests is what makes it fast,
    which is what ``tdk tune`` is for. Weights are stored as int8 with a per-layer scale (Cast and
    Mul are constant-folded when the session loads), so the file stays small.
    """
    rng = np.random.default_rng(seed)
    n = helper.make_node
    widths = [RANKER_FEATURES, *[RANKER_WIDTH] * RANKER_LAYERS, 1]
    nodes, initializers, current = [], [], "features"
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
        q = rng.integers(-127, 128, size=(fan_in, fan_out), dtype=np.int8)
        initializers += [
            numpy_helper.from_array(q, f"w{i}_q"),
            _const(f"w{i}_scale", [1.0 / (127.0 * np.sqrt(fan_in / 3.0))], np.float32),
            _weights(rng, f"b{i}", (fan_out,)),
        ]
        last = i == len(widths) - 2
        nodes += [
            n("Cast", [f"w{i}_q"], [f"w{i}_f"], to=TensorProto.FLOAT),
            n("Mul", [f"w{i}_f", f"w{i}_scale"], [f"w{i}"]),
            n("MatMul", [current, f"w{i}"], [f"mm{i}"]),
            n("Add", [f"mm{i}", f"b{i}"], ["score" if last else f"pre{i}"]),
        ]
        if not last:
            nodes.append(n("Relu", [f"pre{i}"], [f"h{i}"]))
            current = f"h{i}"
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "ranker",
        [helper.make_tensor_value_info("features", f32, ["batch", RANKER_FEATURES])],
        [helper.make_tensor_value_info("score", f32, ["batch", 1])],
        initializers,
    )
    return _model(graph)


def _tensor(message: Any, name: str, dtype: str, dims: list[int]) -> None:
    tensor = message.add()
    tensor.name = name
    tensor.data_type = _pb_type(dtype)
    tensor.dims.extend(dims)


def _pb_type(dtype: str) -> int:
    from tritonclient.grpc import model_config_pb2

    return int(model_config_pb2.DataType.Value(f"TYPE_{dtype}"))


def text_classifier_config() -> Any:
    config = new_config()
    config.name = "text_classifier"
    config.backend = "onnxruntime"
    config.max_batch_size = 8
    _tensor(config.input, "token_ids", "INT32", [SEQ_LEN])
    _tensor(config.input, "attn_mask", "INT32", [SEQ_LEN])
    _tensor(config.output, "output", "FP32", [SEQ_LEN, HIDDEN])
    _tensor(config.output, "pooled_output", "FP32", [HIDDEN])
    config.dynamic_batching.preferred_batch_size.extend([4, 8])
    config.dynamic_batching.max_queue_delay_microseconds = 100
    return config


def image_classifier_config() -> Any:
    config = new_config()
    config.name = "image_classifier"
    config.backend = "onnxruntime"
    config.max_batch_size = 16
    _tensor(config.input, "input", "FP32", [3, 224, 224])
    _tensor(config.output, "logits", "FP32", [NUM_CLASSES])
    config.dynamic_batching.max_queue_delay_microseconds = 100
    return config


def ranker_config() -> Any:
    """As a cautious first deployment is often written: one request per call. (With a
    ``max_batch_size`` above 1 and no scheduler, Triton's onnxruntime backend would add a
    dynamic batcher on its own, which the local runtime does not reproduce.)"""
    config = new_config()
    config.name = "ranker"
    config.backend = "onnxruntime"
    config.max_batch_size = 1
    _tensor(config.input, "features", "FP32", [RANKER_FEATURES])
    _tensor(config.output, "score", "FP32", [1])
    return config


def tokenizer_config() -> Any:
    config = new_config()
    config.name = "tokenizer"
    config.backend = "python"
    config.max_batch_size = 8
    _tensor(config.input, "text", "STRING", [1])
    _tensor(config.output, "token_ids", "INT32", [SEQ_LEN])
    _tensor(config.output, "attn_mask", "INT32", [SEQ_LEN])
    config.dynamic_batching.SetInParent()
    group = config.instance_group.add()
    group.count = 1
    group.kind = group.KIND_CPU
    return config


def llm_config() -> Any:
    """A decoupled generator with the vLLM backend's generate-endpoint tensors (names, types and
    dims as vllm_backend's ``src/model.py`` auto-completes them: github.com/triton-inference-
    server/vllm_backend, checked 2026-11-26); no batching in Triton, as vLLM's config sets."""
    config = new_config()
    config.name = "llm"
    config.backend = "python"
    config.max_batch_size = 0
    _tensor(config.input, "text_input", "STRING", [1])
    for name, dtype in (
        ("stream", "BOOL"),
        ("sampling_parameters", "STRING"),
        ("return_finish_reason", "BOOL"),
    ):
        _tensor(config.input, name, dtype, [1])
        config.input[-1].optional = True
    _tensor(config.output, "text_output", "STRING", [-1])
    _tensor(config.output, "finish_reason", "STRING", [-1])
    config.model_transaction_policy.decoupled = True
    group = config.instance_group.add()
    group.count = 1
    group.kind = group.KIND_CPU
    return config


def text_pipeline_config() -> Any:
    config = new_config()
    config.name = "text_pipeline"
    config.platform = "ensemble"
    config.max_batch_size = 8
    _tensor(config.input, "text", "STRING", [1])
    _tensor(config.output, "output", "FP32", [SEQ_LEN, HIDDEN])
    _tensor(config.output, "pooled_output", "FP32", [HIDDEN])
    tokenize = config.ensemble_scheduling.step.add()
    tokenize.model_name = "tokenizer"
    tokenize.model_version = -1
    tokenize.input_map["text"] = "text"
    tokenize.output_map["token_ids"] = "token_ids"
    tokenize.output_map["attn_mask"] = "attn_mask"
    classify = config.ensemble_scheduling.step.add()
    classify.model_name = "text_classifier"
    classify.model_version = -1
    classify.input_map["token_ids"] = "token_ids"
    classify.input_map["attn_mask"] = "attn_mask"
    classify.output_map["output"] = "output"
    classify.output_map["pooled_output"] = "pooled_output"
    return config


def _write(path: Path, data: bytes, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    written.append(path)


def _model_dir(
    out: Path, config: Any, version_file: str | None, data: bytes, written: list[Path]
) -> None:
    model_dir = out / config.name
    if model_dir.exists():
        shutil.rmtree(model_dir)  # a stale file from an older run must not survive
    _write(model_dir / CONFIG_NAME, dump_config(config).encode(), written)
    (model_dir / "1").mkdir(parents=True)
    if version_file is not None:
        _write(model_dir / "1" / version_file, data, written)


MODELS: dict[str, tuple[Callable[[], Any], str | None, Callable[[], bytes]]] = {
    "text_classifier": (
        text_classifier_config,
        "model.onnx",
        lambda: text_classifier_onnx().SerializeToString(),
    ),
    "image_classifier": (
        image_classifier_config,
        "model.onnx",
        lambda: image_classifier_onnx().SerializeToString(),
    ),
    "tokenizer": (tokenizer_config, "model.py", TOKENIZER_SOURCE.read_bytes),
    "text_pipeline": (text_pipeline_config, None, lambda: b""),  # ensembles: empty version dir
}


#: models written only on request (``--with ranker``): bench/tune.py tunes ``ranker``; at 9 MB
#: it stays out of the default repository every test packages and loads
EXTRA_MODELS: dict[str, tuple[Callable[[], Any], str | None, Callable[[], bytes]]] = {
    "ranker": (ranker_config, "model.onnx", lambda: ranker_onnx().SerializeToString()),
    "llm": (llm_config, "model.py", LLM_SOURCE.read_bytes),
    # one Python-backend stub process per loaded copy, numpy only: what the many-models
    # bench (bench/mme_k8s.py) serves a thousand copies of
    "echo": (lambda: gpu_config("echo", "python", "cpu"), "model.py", GPU_ECHO_SOURCE.read_bytes),
}


def gpu_onnx(seed: int = 3) -> onnx.ModelProto:
    """The ONNX twin of ``gpu_mlp``: FP16 in and out, FP32 inside."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("Cast", ["x"], ["x32"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["x32", "w1"], ["h"]),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("MatMul", ["hr", "w2"], ["y32"]),
        helper.make_node("Cast", ["y32"], ["y"], to=TensorProto.FLOAT16),
    ]
    graph = helper.make_graph(
        nodes,
        "gpu_onnx",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["batch", GPU_IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["batch", GPU_OUT])],
        [
            _weights(rng, "w1", (GPU_IN, GPU_HIDDEN)),
            _weights(rng, "w2", (GPU_HIDDEN, GPU_OUT)),
        ],
    )
    return _model(graph)


def gpu_config(name: str, backend: str, kind: str) -> Any:
    """A GPU sample's config: FP16 [64] -> [16], one instance of ``kind`` (gpu or cpu), batching
    allowed but no dynamic batcher (a first deployment as often written: tune finds more)."""
    config = new_config()
    config.name = name
    config.backend = backend
    config.max_batch_size = 32
    _tensor(config.input, "x", "FP16", [GPU_IN])
    _tensor(config.output, "y", "FP16", [GPU_OUT])
    group = config.instance_group.add()
    group.count = 1
    group.kind = group.KIND_GPU if kind == "gpu" else group.KIND_CPU
    return config


def generate_gpu(out: Path, kind: str = "gpu") -> list[Path]:
    """Write ``gpu_mlp`` (Python backend, torch), ``gpu_echo`` (its tensors, numpy only) and
    ``gpu_onnx`` under ``out``."""
    written: list[Path] = []
    for name, source in (("gpu_mlp", GPU_MLP_SOURCE), ("gpu_echo", GPU_ECHO_SOURCE)):
        _model_dir(out, gpu_config(name, "python", kind), "model.py", source.read_bytes(), written)
    onnx_config = gpu_config("gpu_onnx", "onnxruntime", kind)
    _model_dir(out, onnx_config, "model.onnx", gpu_onnx().SerializeToString(), written)
    return written


def generate(out: Path, extra: tuple[str, ...] = (), kind: str = "gpu") -> list[Path]:
    """Write the four sample models (and the ``extra`` ones named) under ``out``; returns the
    files written, sorted. ``kind``: the instance kind of the ``gpu`` extra."""
    written: list[Path] = []
    chosen = [*MODELS.values(), *(EXTRA_MODELS[name] for name in extra if name != "gpu")]
    for make_config, version_file, make_data in chosen:
        _model_dir(out, make_config(), version_file, make_data(), written)
    if "gpu" in extra:
        written += generate_gpu(out, kind)
    return sorted(written)


def write_extra(out: Path, name: str) -> list[Path]:
    """Write only the extra model ``name`` (e.g. ``llm``) under ``out``; returns its files."""
    written: list[Path] = []
    make_config, version_file, make_data = EXTRA_MODELS[name]
    _model_dir(out, make_config(), version_file, make_data(), written)
    return sorted(written)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="repository directory")
    parser.add_argument(
        "--with",
        dest="extra",
        action="append",
        default=[],
        choices=sorted([*EXTRA_MODELS, "gpu"]),
        help="also write this extra model (repeatable; gpu: gpu_mlp, gpu_echo, gpu_onnx)",
    )
    parser.add_argument(
        "--kind", choices=("gpu", "cpu"), default="gpu", help="instance kind of the gpu models"
    )
    args = parser.parse_args(argv)
    files = generate(args.out, tuple(args.extra), args.kind)
    count = len(MODELS) + len(args.extra) + 2 * ("gpu" in args.extra)
    print(f"wrote {len(files)} files for {count} models under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

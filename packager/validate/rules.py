"""The rule table: one stable code per check ``tdk validate`` makes (the deploy-target checks
of ``infra.targets.checks`` included), its severity, what Triton does at load time, the fix,
and the Triton document or source file the rule comes from.

Every finding takes its severity from here (``Sink.report``, ``findings.finding``); the table
is built once and cannot be changed at run time. ``docs/rules.md`` is generated from it:
``python -m packager.validate.rules > docs/rules.md``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Severity = Literal["error", "warning"]

_DOCS = "https://github.com/triton-inference-server/server/blob/main/docs/user_guide/"
_CORE = "https://github.com/triton-inference-server/core/blob/main/src/"
ORT_SRC = (
    "https://github.com/triton-inference-server/onnxruntime_backend/blob/main/src/onnxruntime.cc"
)
#: what ONNX Runtime refuses of a graph's structure, checked in the installed package
ORT_STRUCTURE = "packager/validate/onnx_structure.py"
TRT_SRC = "https://github.com/triton-inference-server/tensorrt_backend/blob/main/src/model_state.cc"
CONFIG_DOC = _DOCS + "model_configuration.md"
REPO_DOC = _DOCS + "model_repository.md"
BATCHER_DOC = _DOCS + "batcher.md"
ENSEMBLE_DOC = _DOCS + "ensemble_models.md"
CONFIG_SRC = _CORE + "model_config_utils.cc"
ENSEMBLE_SRC = _CORE + "ensemble_scheduler/ensemble_utils.cc"
SAGEMAKER_DOC = "https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoints.html"
TARGET_FACTS = "infra/facts/hardware.py"  # the deploy-target rules (TDK9xx) come from its facts
#: checks whose figures the target's offer carries (``TargetSpec``: its container's limits)
TARGET_CHECKS = "infra/targets/checks.py"
VLLM_SRC = "https://github.com/triton-inference-server/vllm_backend/blob/main/src/model.py"
VLLM_ARGS = "https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py"
TRTLLM_REPO = "https://github.com/NVIDIA/TensorRT-LLM/tree/main/triton_backend/all_models"
FEASIBILITY = "infra/targets/feasibility.py"  # the stack rules (TDK91x): the one feasibility path
CUDA_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
#: how a serving unit holds the release (all at start, or on demand): its checks
LOADING = "infra/targets/loading.py"
#: sagemaker-core 2.27 lists the SageMaker Triton images: only ``<yy.mm>-py3`` tags (checked
#: 2026-11-27 in the installed package)
SAGEMAKER_CORE_TRITON_IMAGES = (
    "https://github.com/aws/sagemaker-python-sdk/blob/master/sagemaker-core/src/sagemaker/core/"
    "image_uri_config/sagemaker-tritonserver.json"
)
SAGEMAKER_SERVER_SRC = (
    "https://github.com/triton-inference-server/server/blob/main/src/sagemaker_server.cc"
)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    triton: str  # what Triton (or tdk/SageMaker) does at load time
    fix: str
    source: str  # the document or source file the rule comes from


# code, name, severity, what Triton does at load time, the fix, where the rule comes from
# fmt: off
_TABLE: list[tuple[str, str, str, str, str, str]] = [
    ("TDK101", "config-missing", "error",
     "a model directory without config.pbtxt is not loaded (tdk package refuses it)",
     "add config.pbtxt or move the directory out", REPO_DOC),
    ("TDK102", "config-unparseable", "error",
     "the config is not a valid ModelConfig text proto; the load fails",
     "fix the field at the reported line", CONFIG_DOC),
    ("TDK103", "name-mismatch", "error",
     "`name:` must equal the directory name",
     "rename the directory or the `name:`", REPO_DOC),
    ("TDK104", "name-invalid", "error",
     "names must be valid SageMaker TargetModels and Triton names ([A-Za-z0-9._-])",
     "rename the model", SAGEMAKER_DOC),
    ("TDK105", "name-duplicate", "error",
     "a model name appearing in two repositories is refused",
     "rename one of them", REPO_DOC),
    ("TDK106", "platform-unknown", "error",
     "a platform without `backend` must be one Triton maps to a backend",
     "use a known platform or set `backend`", CONFIG_DOC),
    ("TDK107", "backend-platform-mismatch", "error",
     "TensorRT/ONNX Runtime/PyTorch/TensorFlow backends must agree with `platform`; "
     "an ensemble has no backend",
     "remove one of them or make them agree", CONFIG_SRC),
    ("TDK108", "backend-missing", "error",
     "without backend or platform nothing can serve the model",
     "set `backend`", CONFIG_DOC),
    ("TDK109", "version-missing", "error",
     "no numeric version directory: nothing is loaded",
     "put the model files in <model>/1/", REPO_DOC),
    ("TDK110", "version-not-numeric", "warning",
     "non-numeric subdirectories are ignored",
     "rename or remove them", REPO_DOC),
    ("TDK111", "version-policy-missing", "error",
     "a version named by version_policy.specific must exist",
     "create the version or drop it from the policy", REPO_DOC),
    ("TDK112", "default-filename-path", "error",
     "default_model_filename is looked up inside each version directory; a path is refused",
     "give only the file name", CONFIG_DOC),
    ("TDK113", "model-file-missing", "error",
     "a served version without the backend's model file fails to load",
     "add the file or set default_model_filename", REPO_DOC),
    ("TDK114", "unsafe-entry", "error",
     "symlinks, fifos and devices never enter a package (tdk package refuses them)",
     "replace links with files, remove special files", "docs/validate.md"),
    ("TDK115", "model-file-empty", "error",
     "an empty model file cannot be loaded by any backend",
     "re-export the model", REPO_DOC),
    ("TDK116", "model-file-missing-unserved", "warning",
     "a version the version_policy does not serve is not loaded, so its missing model file "
     "does no harm now; serving it later fails",
     "add the file, or remove the version directory", REPO_DOC),
    ("TDK117", "config-completed-onnx", "warning",
     "no config.pbtxt: the ONNX Runtime backend completes the config from the graph at load "
     "(inputs, outputs, max_batch_size = default-max-batch-size (4) with dynamic batching when "
     "every tensor has a variable first dimension); tdk checks and packages that config",
     "`tdk import model.onnx` (or `tdk validate --show-config`) writes it so you own it",
     ORT_SRC),
    ("TDK118", "config-completed-engine", "warning",
     "no config.pbtxt: the TensorRT backend completes the config from the engine's bindings at "
     "load; tdk cannot read an engine without TensorRT, so its inputs and outputs are unchecked "
     "and the release manifest lists none (invoke then needs every --input)",
     "write config.pbtxt (the ONNX the engine was built from: `tdk import`)",
     TRT_SRC),
    ("TDK201", "max-batch-size-negative", "error",
     "max_batch_size must be >= 0",
     "set 0 or the largest batch", CONFIG_DOC),
    ("TDK202", "tensor-name-missing", "error",
     "every input and output needs a name",
     "name the tensor", CONFIG_SRC),
    ("TDK203", "tensor-name-duplicate", "error",
     "a tensor name may be declared once",
     "rename or remove the duplicate", CONFIG_SRC),
    ("TDK204", "data-type-invalid", "error",
     "TYPE_INVALID is refused",
     "set data_type", CONFIG_SRC),
    ("TDK205", "dims-empty", "error",
     "dims must have at least one dimension",
     "use dims [1] with reshape { shape: [] }", CONFIG_DOC),
    ("TDK206", "dims-invalid", "error",
     "each dimension must be >= 1 or -1",
     "fix the dims", CONFIG_SRC),
    ("TDK207", "reshape-invalid", "error",
     "reshape must hold the same elements as dims",
     "make the element counts agree", CONFIG_DOC),
    ("TDK208", "format-dims", "error",
     "FORMAT_NHWC/NCHW need exactly 3 dims",
     "give 3 dims or drop format", CONFIG_SRC),
    ("TDK209", "shape-tensor-not-tensorrt", "error",
     "is_shape_tensor is only for TensorRT",
     "remove is_shape_tensor", CONFIG_SRC),
    ("TDK210", "label-file-missing", "error",
     "label_filename must exist in the model directory",
     "add the file or remove label_filename", CONFIG_DOC),
    ("TDK211", "instance-count-negative", "warning",
     "a count below 1 is replaced by the backend's default instance count",
     "set the count you mean (>= 1)", CONFIG_SRC),
    ("TDK212", "instance-gpus-invalid", "error",
     "gpus only on KIND_GPU groups, ids >= 0",
     "remove gpus or use KIND_GPU", CONFIG_SRC),
    ("TDK213", "instance-kind-gpu", "warning",
     "KIND_GPU cannot load on a CPU-only host",
     "deploy to a GPU, or use KIND_AUTO", CONFIG_DOC),
    ("TDK214", "instance-profile", "error",
     "`profile` is TensorRT only and must be an index",
     "remove profile or give an index", CONFIG_SRC),
    ("TDK215", "warmup-batch-size", "error",
     "warmup batch_size must be <= max_batch_size",
     "lower batch_size", CONFIG_SRC),
    ("TDK216", "warmup-input", "error",
     "a warmup input must have the data_type of the model input it feeds",
     "fix the warmup input", CONFIG_SRC),
    ("TDK217", "warmup-dims", "error",
     "warmup dims must be concrete",
     "give the exact shape", CONFIG_SRC),
    ("TDK218", "ensemble-scheduling-missing", "error",
     "platform ensemble needs ensemble_scheduling",
     "add ensemble_scheduling { step [...] }", CONFIG_SRC),
    ("TDK219", "ensemble-forbidden-field", "error",
     "ensembles take no instance_group, model_warmup or optimization",
     "remove the field", CONFIG_SRC),
    ("TDK220", "ensemble-scheduling-not-ensemble", "error",
     "ensemble_scheduling needs platform ensemble",
     "set platform: \"ensemble\"", CONFIG_SRC),
    ("TDK221", "response-cache-unsupported", "error",
     "the response cache does not support decoupled or sequence-batched models",
     "disable response_cache", CONFIG_SRC),
    ("TDK222", "warmup-input-unknown", "warning",
     "a warmup input that is not a model, control, state or batch input is passed to the "
     "backend, which may refuse the warmup",
     "use a model input's name", CONFIG_SRC),
    ("TDK223", "dims-overflow", "error",
     "a tensor's fixed dims (at the largest batch) must fit Triton's 64-bit byte size",
     "give the real dims", CONFIG_SRC),
    ("TDK301", "preferred-batch-size", "error",
     "preferred batch sizes must lie in 1..max_batch_size",
     "fix the sizes", CONFIG_SRC),
    ("TDK302", "dynamic-batching-without-batching", "warning",
     "with max_batch_size 0 the dynamic batcher never batches",
     "set max_batch_size > 0 or remove it", BATCHER_DOC),
    ("TDK303", "priority-settings-ignored", "warning",
     "priority settings are ignored without priority_levels",
     "set priority_levels", CONFIG_SRC),
    ("TDK304", "priority-level-range", "error",
     "priority levels must lie in 1..priority_levels",
     "fix the level", CONFIG_SRC),
    ("TDK305", "preserve-ordering", "error",
     "preserve_ordering allows one level and no DELAY",
     "drop preserve_ordering or the extra levels", CONFIG_SRC),
    ("TDK306", "sequence-without-controls", "warning",
     "the model never sees START/READY/END",
     "add control_input entries", BATCHER_DOC),
    ("TDK307", "control-input-name", "error",
     "control tensors need names, one per control entry",
     "rename the control tensor", CONFIG_SRC),
    ("TDK308", "control-kind-duplicate", "error",
     "each control kind may be given once",
     "keep one control per kind", CONFIG_SRC),
    ("TDK309", "control-values", "error",
     "boolean controls need exactly one false/true pair; CORRID takes a data_type",
     "fix the control", CONFIG_SRC),
    ("TDK310", "corrid-data-type", "error",
     "CONTROL_SEQUENCE_CORRID takes an integer or string type",
     "use TYPE_UINT64 or TYPE_STRING", CONFIG_SRC),
    ("TDK311", "direct-slot-utilization", "error",
     "minimum_slot_utilization must be in 0..1",
     "fix the value", CONFIG_SRC),
    ("TDK312", "state-invalid", "error",
     "a state needs input_name, output_name, data_type and valid dims",
     "complete the state", BATCHER_DOC),
    ("TDK313", "batch-io-without-batching", "warning",
     "batch_input/batch_output need batching",
     "set max_batch_size > 0", CONFIG_DOC),
    ("TDK314", "batch-input-data-type", "error",
     "batch inputs are TYPE_INT32 or TYPE_FP32",
     "fix data_type", CONFIG_SRC),
    ("TDK315", "batch-input-target", "warning",
     "backends count one model input per batch input; its target should not be a model input",
     "fix target_name", CONFIG_SRC),
    ("TDK316", "batch-output-target", "error",
     "batch output targets must be model outputs, once each",
     "fix target_name", CONFIG_SRC),
    ("TDK317", "batch-source-input", "error",
     "batch I/O needs exactly one source_input that is a model input",
     "fix source_input", CONFIG_SRC),
    ("TDK318", "control-input-is-model-input", "warning",
     "a control tensor also declared as a model input is overridden by the sequence batcher",
     "remove it from `input` (clients never send control tensors)", BATCHER_DOC),
    ("TDK401", "ensemble-no-steps", "error",
     "an ensemble needs at least one step",
     "add steps", ENSEMBLE_DOC),
    ("TDK402", "step-model-missing", "error",
     "each step's model must be in the repository",
     "add the model or fix model_name", ENSEMBLE_DOC),
    ("TDK403", "step-map-empty", "error",
     "input_map and output_map must not be empty",
     "map the step's tensors", ENSEMBLE_SRC),
    ("TDK404", "step-output-unknown", "error",
     "output_map keys must be the model's outputs",
     "use an output of the model", ENSEMBLE_SRC),
    ("TDK405", "tensor-two-producers", "error",
     "an ensemble tensor has one producer",
     "map to a new tensor name", ENSEMBLE_SRC),
    ("TDK406", "step-version-missing", "error",
     "model_version must exist (or be -1)",
     "use -1 or an existing version", ENSEMBLE_SRC),
    ("TDK407", "step-batch-size", "error",
     "a batching step must allow the ensemble's batch size",
     "lower the ensemble's max_batch_size", ENSEMBLE_SRC),
    ("TDK408", "step-input-unknown", "error",
     "input_map keys must be the model's inputs",
     "use an input of the model", ENSEMBLE_SRC),
    ("TDK409", "tensor-not-produced", "error",
     "a step input must come from an ensemble input or an earlier step",
     "map it from a producer", ENSEMBLE_SRC),
    ("TDK410", "step-input-unmapped", "error",
     "every required step input must be mapped",
     "add it to input_map", ENSEMBLE_SRC),
    ("TDK411", "tensor-mismatch", "error",
     "both sides of an ensemble tensor agree on type and shape",
     "make data types and dims agree", ENSEMBLE_SRC),
    ("TDK412", "ensemble-input-unused", "error",
     "every ensemble input must feed a step",
     "map it or remove it", ENSEMBLE_SRC),
    ("TDK413", "tensor-unused", "error",
     "a produced tensor must be consumed or be an output",
     "consume it or drop it", ENSEMBLE_SRC),
    ("TDK414", "ensemble-output-not-produced", "error",
     "every ensemble output needs a producer",
     "map a step output to it", ENSEMBLE_SRC),
    ("TDK415", "step-cycle", "error",
     "steps cannot depend on each other's outputs",
     "break the cycle", ENSEMBLE_SRC),
    ("TDK416", "ensemble-contains-itself", "error",
     "an ensemble cannot contain itself",
     "remove the step", ENSEMBLE_SRC),
    ("TDK417", "decoupled-inputs-mixed", "error",
     "a step cannot take inputs that originate from different decoupled steps",
     "feed the step from one decoupled branch", ENSEMBLE_SRC),
    ("TDK501", "onnx-unreadable", "error",
     "the ONNX file cannot be parsed",
     "re-export the model", ORT_SRC),
    ("TDK502", "onnx-tensor-missing", "error",
     "config tensors must exist in the graph",
     "rename to a graph tensor", ORT_SRC),
    ("TDK503", "onnx-input-undeclared", "error",
     "every graph input must be a config input, control tensor, state or batch input",
     "declare it", ORT_SRC),
    ("TDK504", "onnx-data-type", "error",
     "config data_type must equal the graph's",
     "fix data_type", ORT_SRC),
    ("TDK505", "onnx-rank", "error",
     "config rank (plus batch) must equal the graph's",
     "fix dims", ORT_SRC),
    ("TDK506", "onnx-dim", "error",
     "fixed graph dimensions must match the config",
     "fix dims", ORT_SRC),
    ("TDK507", "onnx-batch-dim", "error",
     "batching needs a dynamic first graph dimension",
     "export with a dynamic batch axis", ORT_SRC),
    ("TDK508", "onnx-optional-batching", "error",
     "optional inputs are not supported for models that batch",
     "set max_batch_size 0 or make the input required", ORT_SRC),
    ("TDK509", "onnx-ragged-shape", "error",
     "a ragged input must be [-1] in the graph",
     "export the input as a 1-D dynamic tensor", ORT_SRC),
    ("TDK510", "onnx-fed-input-missing", "error",
     "control, state and batch inputs count as graph inputs; a graph without them is refused",
     "export the graph with the input", ORT_SRC),
    ("TDK511", "onnx-control-flow", "error",
     "If needs then_branch and else_branch graphs, Loop and Scan a body graph",
     "re-export the model", ORT_STRUCTURE),
    ("TDK512", "onnx-graph-cycle", "error",
     "a graph whose nodes depend on each other in a cycle is not acyclic: refused",
     "re-export the model", ORT_STRUCTURE),
    # the LLM engines' own files (packager/validate/engines): vLLM and TensorRT-LLM
    ("TDK601", "template-unfilled", "error",
     "a config.pbtxt with ${...} placeholders is a template: protobuf cannot parse it or the "
     "backend gets the literal text",
     "fill every placeholder with TensorRT-LLM's tools/fill_template.py", TRTLLM_REPO),
    ("TDK602", "engine-args-unreadable", "error",
     "the engine reads its arguments (vLLM 1/model.json, TensorRT-LLM 1/model.yaml) when the "
     "model loads; a missing or malformed file fails the load",
     "add the file as a JSON object (YAML mapping for model.yaml)", VLLM_SRC),
    ("TDK603", "engine-arg-unknown", "error",
     "EngineArgs(**model.json) and LLM(**model.yaml) refuse an argument they do not take",
     "use the engine's argument name (see the suggestion)", VLLM_ARGS),
    ("TDK604", "engine-arg-unrecognised", "warning",
     "an argument the recorded engine version does not list: a newer engine may take it, an "
     "older one refuses it",
     "check the argument against the engine version of the image you deploy", VLLM_ARGS),
    ("TDK605", "engine-arg-value", "error",
     "the engine refuses the value at load time (gpu_memory_utilization outside (0, 1], "
     "parallel sizes below 1, a wrong type, a string outside the argument's allowed values such as "
     "TensorRT-LLM's backend: \"pytorchh\")",
     "fix the value", VLLM_ARGS),
    ("TDK606", "engine-multi-gpu-kind", "error",
     "the vLLM backend refuses KIND_GPU for a model on more than one GPU (tensor x pipeline "
     "parallel > 1): 'KIND_GPU is currently for single-GPU models'",
     "use instance_group [{ kind: KIND_MODEL }]", VLLM_SRC),
    ("TDK607", "engine-gpu-memory-oversubscribed", "error",
     "each instance is its own engine reserving its gpu_memory_utilization of the GPU; "
     "instances sharing a GPU whose fractions sum over 1 fail to start (out of memory)",
     "lower the instance count or gpu_memory_utilization so the sum per GPU is <= 1", VLLM_SRC),
    ("TDK608", "engine-decoupled-required", "error",
     "the vLLM backend sets and asserts the decoupled transaction policy and max_batch_size 0 "
     "(it batches itself); a config saying otherwise fails auto-complete or the assertion",
     "remove model_transaction_policy and max_batch_size from config.pbtxt", VLLM_SRC),
    ("TDK609", "engine-lora-file", "error",
     "with enable_lora the vLLM backend reads 1/multi_lora.json, a JSON object of adapter "
     "name -> local path; a missing or malformed file fails the load",
     "add multi_lora.json as {\"name\": \"path\"} or drop enable_lora", VLLM_SRC),
    ("TDK610", "engine-weights-download", "warning",
     "weights named by a Hugging Face id are downloaded by the engine when the model loads: "
     "not covered by the manifest's sha256, gated models need HF_TOKEN, every cold start pays "
     "the download",
     "put the weights in the model directory (or a mounted cache) and give a local path",
     VLLM_SRC),
    ("TDK611", "engine-config-mismatch", "error",
     "a TensorRT-LLM engine is built for fixed limits (max batch size, tensor/pipeline "
     "parallel ranks); a config.pbtxt asking for more fails at load or first request",
     "rebuild the engine or lower the config's limits", TRTLLM_REPO),
    ("TDK612", "engine-tensor-mismatch", "error",
     "the vLLM backend's auto-complete declares its inputs and outputs; a config declaring one "
     "with another data type, dims or optional flag is refused at load",
     "remove the tensor from config.pbtxt (the backend adds it) or declare it as the backend does",
     VLLM_SRC),
    ("TDK613", "engine-version-unrecorded", "warning",
     "the target's vllm (trtllm) image ships a vLLM (TensorRT-LLM) version whose EngineArgs "
     "(LLM() arguments) are not recorded (or no checked source names its version): model.json "
     "(model.yaml) names were checked against another version",
     "record that version's arguments, or check the names against the image's engine by hand",
     VLLM_ARGS),
    ("TDK614", "engine-metrics-off", "warning",
     "the vLLM backend exports the engine's metrics only when REPORT_CUSTOM_METRICS is \"true\" "
     "(any case) and disable_log_stats is false: otherwise the vllm: series never exist",
     "drop disable_log_stats and REPORT_CUSTOM_METRICS (packaging turns the metrics on), or "
     "accept scaling on Triton's in-flight and pending series", VLLM_SRC),
    ("TDK615", "engine-repository-removed", "warning",
     "TensorRT-LLM removed its engine-based Triton repositories (the tensorrtllm backend, "
     "all_models/inflight_batcher_llm) in PRs #15763 and #15907; only all_models/llmapi remains",
     "move to the LLM-API model (all_models/llmapi: model.yaml)", TRTLLM_REPO),
    # the deploy-target checks of infra.targets.checks (tdk validate --target)
    ("TDK901", "backend-not-in-image", "error",
     "the target's Triton image has no such backend; the model fails to load",
     "pick another target or backend", TARGET_FACTS),
    ("TDK902", "weights-exceed-disk", "error",
     "the model's files do not fit the instance disk SageMaker downloads them to",
     "use an instance with a larger disk", TARGET_FACTS),
    ("TDK903", "python-shm", "error",
     "each Python-backend instance takes shm-default-byte-size of /dev/shm (16 MiB of 64 MiB "
     "on SageMaker): 'Stub is unhealthy' / shared memory errors",
     "lower instance_group count", TARGET_CHECKS),
    ("TDK904", "weights-exceed-gpu", "error",
     "the weights alone exceed the GPU memory",
     "use a larger GPU or a smaller model", TARGET_FACTS),
    ("TDK905", "mme-working-set", "warning",
     "fewer copies fit loaded at once than the release holds: SageMaker MME unloads (LRU) and "
     "reloads them",
     "raise instance count, GPU size, or expect load latency", TARGET_FACTS),
    ("TDK906", "tensorrt-engine-target", "error",
     "a TensorRT engine runs only on the GPU compute capability and TensorRT version it was "
     "built for, and nothing shows these engines were built for the target's (no record, or the "
     "image's TensorRT unknown and the engine built in another release's container)",
     "tdk build --stack (records it); or record it with --trt-built-for", TARGET_FACTS),
    ("TDK907", "tensorrt-built-for-other", "error",
     "the engines were recorded as built for another compute capability or TensorRT version "
     "than the target's: Triton fails to deserialize them",
     "rebuild the engines for the target", TARGET_FACTS),
    ("TDK908", "gpu-instances-on-cpu", "error",
     "a KIND_GPU instance group on an instance without a GPU: 'has kind KIND_GPU but no GPUs "
     "are available'",
     "use KIND_AUTO or KIND_CPU, or a GPU instance type", TARGET_FACTS),
    ("TDK909", "kv-cache-below-context", "error",
     "after the weights, vLLM's share of the GPUs cannot hold the KV cache of one request of "
     "max_model_len (sized per token from config.json): vLLM refuses to start",
     "set max_model_len, raise gpu_memory_utilization, or give the replica more GPU memory",
     TARGET_FACTS),
    # the stack rules of infra.targets.feasibility (validate --target/--stack, plan, doctor)
    ("TDK910", "stack-refused", "error",
     "the target's own config parser refuses the stack (a refused value, a name rule, an "
     "unknown instance type): pulumi up stops before declaring anything",
     "change the key the message names", FEASIBILITY),
    ("TDK911", "capacity-at-creation", "error",
     "the copies a stack creates need more accelerators, cores or memory than its most "
     "instances offer: a copy SageMaker cannot place fails the create",
     "raise the instance bound, pick a larger instance, or create fewer copies", FEASIBILITY),
    ("TDK912", "capacity-at-maximum", "warning",
     "the configured maximum copies need more than the most instances offer: copies beyond "
     "the fleet wait for capacity",
     "raise the instance bound or lower the maximum copies", FEASIBILITY),
    ("TDK913", "gpus-per-replica", "error",
     "one replica needs more GPUs (tensor x pipeline parallel) than one serving unit has",
     "pick a larger instance or node, or lower the parallelism", FEASIBILITY),
    ("TDK914", "gpu-memory-fractions", "error",
     "the engines' GPU memory fractions add up to more than one GPU",
     "lower gpu_memory_utilization, or serve the models apart", FEASIBILITY),
    ("TDK915", "decoupled-unsupported", "error",
     "the target cannot serve decoupled models: SageMaker MME's front answers 'HTTP end point "
     "doesn't support models with decoupled transaction policy'",
     "serve the model on a target that streams (sagemaker-ic or a Kubernetes target)",
     SAGEMAKER_SERVER_SRC),
    ("TDK916", "engine-unsupported", "error",
     "the target's Triton image carries no LLM engine: the SageMaker Triton images are the -py3 "
     "tags only, without the vllm and tensorrtllm backends",
     "serve vLLM / TensorRT-LLM models on a Kubernetes target (the -vllm-python-py3 / "
     "-trtllm-python-py3 image)", SAGEMAKER_CORE_TRITON_IMAGES),
    ("TDK917", "engine-driver-too-old", "error",
     "the node's NVIDIA driver is below the minimum of the engine image's CUDA major (CUDA 13.x "
     "needs >= 580) and its GPU is not a data-center GPU, the only kind forward compatibility "
     "serves: the container cannot start",
     "use a node image with a driver of the image's CUDA branch, or an older release",
     CUDA_COMPAT),
    ("TDK918", "engine-driver-not-native", "warning",
     "the node's driver is older than the one the engine image's CUDA ships with: it runs "
     "through CUDA minor version compatibility (limited feature set), or, below the major's "
     "minimum on a data-center GPU, only through forward compatibility on the branches NVIDIA "
     "supports; or no source says which driver the nodes run",
     "nothing if the engine loads; a node driver of the image's CUDA branch removes the doubt",
     CUDA_COMPAT),
    ("TDK919", "release-exceeds-unit", "error",
     "the unit loads every model of the release at start and all its copies take more memory "
     "than it has: Triton runs out of memory loading them, the unit never becomes ready",
     "load each copy on its first request instead (k8sModelMode mme), or a larger unit",
     LOADING),
    ("TDK920", "steps-not-in-release", "error",
     "an ensemble loaded copy by copy on its first request needs its steps in the release: "
     "Triton cannot load an ensemble whose composing models are absent",
     "package the steps with the ensemble", LOADING),
]
# fmt: on


def _build(table: Iterable[tuple[str, str, str, str, str, str]]) -> Mapping[str, Rule]:
    rules: dict[str, Rule] = {}
    for code, name, severity, triton, fix, source in table:
        if code in rules:
            raise ValueError(f"rule code {code} appears twice in the rule table")
        if severity not in ("error", "warning"):
            raise ValueError(f"rule {code} has severity {severity!r}, not error or warning")
        rules[code] = Rule(code, name, severity, triton, fix, source)  # type: ignore[arg-type]
    return MappingProxyType(rules)


RULES: Mapping[str, Rule] = _build(_TABLE)  # read-only: built once, never changed at run time
TARGET_CODES = frozenset(code for code in RULES if code.startswith("TDK9"))
#: the LLM engines' rules: their corpus is tests/validate/llm (not the sample-repository fixtures)
ENGINE_CODES = frozenset(code for code in RULES if code.startswith("TDK6"))


def severity_of(code: str) -> Severity:
    """The severity the table gives ``code``; a code not in the table is a programming error."""
    try:
        return RULES[code].severity
    except KeyError:
        raise KeyError(
            f"finding code {code!r} is not in the rule table; add a row to _TABLE in "
            "packager/validate/rules.py"
        ) from None


def render_markdown(rules: Iterable[Rule]) -> str:
    """``docs/rules.md``: every rule, generated so it cannot drift from the checks."""
    lines = [
        "# `tdk validate` rules",
        "",
        "Generated from the rule table (`python -m packager.validate.rules > docs/rules.md`); "
        "do not edit by hand. A test fails when it is stale.",
        "",
        "| code | name | severity | what Triton does at load time | fix | source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rule in sorted(rules, key=lambda r: r.code):
        source = rule.source
        if not source.startswith("http"):  # a file of this repository, linked from docs/
            source = source.removeprefix("docs/") if source.startswith("docs/") else "../" + source
        link = f"[{'doc' if rule.source.startswith('http') else rule.source}]({source})"
        lines.append(
            f"| {rule.code} | {rule.name} | {rule.severity} | {rule.triton} | {rule.fix} | {link} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m packager.validate.rules > docs/rules.md
    import sys

    sys.stdout.write(render_markdown(RULES.values()))

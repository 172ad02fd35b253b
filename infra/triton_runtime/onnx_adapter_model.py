"""The ONNX adapter's Triton Python-backend model: ONNX Runtime (CPU) on this version's file.

``adapter.py`` copies this file as ``model.py`` into each version directory of an
``onnxruntime`` model served on the local (Python-backend only) Triton. It runs inside Triton's
Python stub, where ``triton_python_backend_utils`` exists; nothing in tdk imports it at run time.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import onnxruntime as ort
import triton_python_backend_utils as pb_utils

FILENAME_PARAMETER = "tdk_onnx_model_filename"  # set by adapter.py in the rewritten config
Feeds = dict[str, np.ndarray]


def _text(value: object) -> object:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class TritonPythonModel:
    """Same inputs, outputs and batching as the original ``onnxruntime`` model."""

    def initialize(self, args: dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        parameters = config.get("parameters", {})
        filename = parameters.get(FILENAME_PARAMETER, {}).get("string_value") or "model.onnx"
        path = os.path.join(args["model_repository"], args["model_version"], filename)
        options = ort.SessionOptions()
        # the onnxruntime backend's own parameter, honoured alike (default: one thread)
        threads = parameters.get("intra_op_thread_count", {}).get("string_value") or "1"
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.batching = config.get("max_batch_size", 0) > 0
        self.inputs = [item["name"] for item in config.get("input", [])]
        self.outputs = [
            (item["name"], pb_utils.triton_string_to_numpy(item["data_type"]))
            for item in config.get("output", [])
        ]
        self.wanted = {output.name for output in self.session.get_outputs()}

    def _feeds(self, request: Any) -> Feeds:
        feeds: Feeds = {}
        for name in self.inputs:
            tensor = pb_utils.get_input_tensor_by_name(request, name)
            if tensor is not None:
                value = tensor.as_numpy()
                if value.dtype == np.object_:
                    value = np.vectorize(_text, otypes=[object])(value)
                feeds[name] = value
        return feeds

    def _run(self, feeds: Feeds) -> Feeds:
        names = [name for name, _ in self.outputs if name in self.wanted]
        values = self.session.run(names, feeds)
        return dict(zip(names, values, strict=True))

    def _response(self, results: Feeds) -> Any:
        tensors = []
        for name, dtype in self.outputs:
            if name in results:
                value = np.asarray(results[name])
                value = value.astype(np.object_) if dtype == np.object_ else value.astype(dtype)
                tensors.append(pb_utils.Tensor(name, value))
        return pb_utils.InferenceResponse(output_tensors=tensors)

    def _batched(self, all_feeds: list[Feeds]) -> list[Feeds] | None:
        """One session run for a dynamic batch when every request has the same inner shapes."""
        first = all_feeds[0]
        for feeds in all_feeds[1:]:
            if feeds.keys() != first.keys() or any(
                feeds[k].shape[1:] != first[k].shape[1:] for k in first
            ):
                return None
        sizes = [next(iter(feeds.values())).shape[0] for feeds in all_feeds]
        merged = {k: np.concatenate([feeds[k] for feeds in all_feeds]) for k in first}
        results = self._run(merged)
        split = np.cumsum(sizes)[:-1]
        parts = {name: np.split(value, split) for name, value in results.items()}
        return [{name: parts[name][i] for name in parts} for i in range(len(sizes))]

    def execute(self, requests: list[Any]) -> list[Any]:
        try:
            all_feeds = [self._feeds(request) for request in requests]
            results = None
            if self.batching and len(requests) > 1 and all(all_feeds):
                results = self._batched(all_feeds)
            if results is None:
                results = [self._run(feeds) for feeds in all_feeds]
            return [self._response(result) for result in results]
        except Exception as exc:  # every request of the batch gets the error
            error = pb_utils.TritonError(f"{exc.__class__.__name__}: {exc}")
            return [pb_utils.InferenceResponse(error=error) for _ in requests]

"""Triton Python backend model: a tiny deterministic text generator (stdlib and numpy only).

Decoupled, with the vLLM backend's tensor names: ``text_input`` (the prompt), optional
``stream`` (BOOL), ``sampling_parameters`` (JSON text; ``max_tokens`` is read) and
``return_finish_reason`` (BOOL); it answers ``text_output`` and, when asked, ``finish_reason``.
Each token is one word chosen from the prompt's CRC-32, produced after a fixed delay
(``TOKEN_DELAY_S``), so time to first token and time per output token are measurable. Streaming
sends one response per token; otherwise one response carries the whole text. Every request runs
on its own thread, the way an LLM engine takes every request at once; a request its client gave
up on (``request.is_cancelled()``, Triton's cancellation, in the Python backend since 23.10) stops
before its next token and ends with a CANCELLED error, as an engine frees its sequence.
"""

from __future__ import annotations

import json
import threading
import time
import zlib

import numpy as np
import triton_python_backend_utils as pb_utils

TOKEN_DELAY_S = 0.02
DEFAULT_MAX_TOKENS = 16
MAX_TOKENS_LIMIT = 512
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india")
WORDS += ("juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo")
WORDS += ("sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu")


def tokens(prompt: str, count: int) -> list[str]:
    """The ``count`` tokens generated for ``prompt`` (a leading space on all but the first)."""
    seed = zlib.crc32(prompt.encode())
    words = [WORDS[(seed + 7 * i) % len(WORDS)] for i in range(count)]
    return [word if i == 0 else f" {word}" for i, word in enumerate(words)]


def _optional(request: object, name: str) -> np.ndarray | None:
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    return None if tensor is None else tensor.as_numpy()


def _text(array: np.ndarray) -> str:
    value = array.reshape(-1)[0]
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _max_tokens(request: object) -> int:
    raw = _optional(request, "sampling_parameters")
    params = json.loads(_text(raw)) if raw is not None else {}
    count = int(params.get("max_tokens", DEFAULT_MAX_TOKENS))
    if not 1 <= count <= MAX_TOKENS_LIMIT:
        raise ValueError(f"max_tokens {count} is outside 1..{MAX_TOKENS_LIMIT}")
    return count


def _cancelled(request: object) -> bool:
    """Whether the request was cancelled (its client went away); False on a backend without
    cancellation."""
    check = getattr(request, "is_cancelled", None)
    return bool(check()) if check is not None else False


def _response(text: str, finish: str | None) -> object:
    outputs = [pb_utils.Tensor("text_output", np.array([text.encode()], dtype=np.object_))]
    if finish is not None:
        outputs.append(pb_utils.Tensor("finish_reason", np.array([finish.encode()], np.object_)))
    return pb_utils.InferenceResponse(output_tensors=outputs)


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        self.threads: set[threading.Thread] = set()
        self.lock = threading.Lock()

    def execute(self, requests: list[object]) -> None:
        for request in requests:
            thread = threading.Thread(target=self._generate, args=(request,), daemon=True)
            with self.lock:
                self.threads.add(thread)
            thread.start()
        return None

    def _generate(self, request: object) -> None:
        sender = request.get_response_sender()  # type: ignore[attr-defined]
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        try:
            prompt = _text(_optional(request, "text_input"))
            stream_flag = _optional(request, "stream")
            stream = bool(stream_flag.reshape(-1)[0]) if stream_flag is not None else False
            want_finish = _optional(request, "return_finish_reason")
            ask_finish = bool(want_finish.reshape(-1)[0]) if want_finish is not None else False
            words = tokens(prompt, _max_tokens(request))
            for index, word in enumerate(words):
                time.sleep(TOKEN_DELAY_S)
                if _cancelled(request):
                    error = pb_utils.TritonError("llm: cancelled", pb_utils.TritonError.CANCELLED)
                    sender.send(pb_utils.InferenceResponse(error=error), flags=final)
                    return
                last = index == len(words) - 1
                if stream:
                    finish = "length" if last and ask_finish else None
                    sender.send(_response(word, finish), flags=final if last else 0)
            if not stream:
                finish = "length" if ask_finish else None
                sender.send(_response("".join(words), finish), flags=final)
        except Exception as exc:  # the caller gets Triton's error, the stream its end
            error = pb_utils.TritonError(f"llm: {exc}")
            sender.send(pb_utils.InferenceResponse(output_tensors=[], error=error), flags=final)
        finally:
            with self.lock:
                self.threads.discard(threading.current_thread())

    def finalize(self) -> None:
        with self.lock:
            running = list(self.threads)
        for thread in running:
            thread.join(timeout=5)

"""Triton Python backend model: a deterministic hashing tokenizer (numpy and stdlib only).

Each request carries ``text`` (BYTES, shape [batch, 1]); the model answers ``token_ids`` and
``attn_mask`` (INT32, shape [batch, 128]): a CLS id, one id per lower-cased word (CRC-32 of the
word modulo the vocabulary), padded with 0 or truncated to 128.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import triton_python_backend_utils as pb_utils

SEQ_LEN = 128
VOCAB_SIZE = 1024
PAD_ID = 0
CLS_ID = 1
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> tuple[np.ndarray, np.ndarray]:
    """``text`` -> (token ids, attention mask), both int32 of length SEQ_LEN."""
    words = _WORD.findall(text.lower())
    ids = [CLS_ID] + [2 + zlib.crc32(word.encode()) % (VOCAB_SIZE - 2) for word in words]
    ids = ids[:SEQ_LEN]
    token_ids = np.full(SEQ_LEN, PAD_ID, dtype=np.int32)
    token_ids[: len(ids)] = ids
    attn_mask = np.zeros(SEQ_LEN, dtype=np.int32)
    attn_mask[: len(ids)] = 1
    return token_ids, attn_mask


def _text(item: object) -> str:
    return item.decode("utf-8", errors="replace") if isinstance(item, bytes) else str(item)


class TritonPythonModel:
    """Triton calls ``execute`` with a list of requests; one response per request."""

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text").as_numpy()
            rows = [tokenize(_text(item)) for item in text.reshape(text.shape[0], -1)[:, 0]]
            token_ids = np.stack([row[0] for row in rows])
            attn_mask = np.stack([row[1] for row in rows])
            outputs = [
                pb_utils.Tensor("token_ids", token_ids),
                pb_utils.Tensor("attn_mask", attn_mask),
            ]
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses

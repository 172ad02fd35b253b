"""A BERT (WordPiece) tokenizer as a Triton Python-backend model, written by ``tdk import
--tokenizer``: ``text`` (BYTES [batch, 1]) -> ``input_ids``, ``attention_mask``,
``token_type_ids`` (INT64 [batch, max_length]), from the ``vocab.txt`` copied beside it.

It follows BERT's BasicTokenizer + WordpieceTokenizer (lower-casing and accent stripping when
the tokenizer config says so, punctuation split, greedy longest-match sub-words) with numpy and
the standard library alone, so the serving image needs no ``transformers``. ``packager.
hf_export`` copies this file as ``model.py``; nothing in tdk imports it at run time.
"""

from __future__ import annotations

import json
import os
import unicodedata
from typing import Any

import numpy as np
import triton_python_backend_utils as pb_utils

MAX_WORD_CHARS = 100  # BERT's WordpieceTokenizer: a longer word is [UNK]


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def basic_tokens(text: str, lower: bool) -> list[str]:
    """Whitespace and punctuation split, lower-cased and accents stripped when ``lower``."""
    if lower:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words: list[str] = []
    for word in text.split():
        current = ""
        for char in word:
            if _is_punctuation(char):
                words += [current] if current else []
                words.append(char)
                current = ""
            else:
                current += char
        words += [current] if current else []
    return words


def wordpiece(word: str, vocab: dict[str, int], unknown: str) -> list[str]:
    """Greedy longest-match sub-words (``##`` marks a continuation)."""
    if len(word) > MAX_WORD_CHARS:
        return [unknown]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return [unknown]
        pieces.append(piece)
        start = end
    return pieces


class TritonPythonModel:
    """One tokenized row per text, padded to ``max_length`` (a config parameter)."""

    def initialize(self, args: dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        parameters = config.get("parameters", {})
        here = os.path.join(args["model_repository"], args["model_version"])
        with open(os.path.join(here, "vocab.txt"), encoding="utf-8") as handle:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(handle)}
        self.max_length = int(parameters["max_length"]["string_value"])
        self.lower = parameters["do_lower_case"]["string_value"] == "true"
        self.unknown = "[UNK]" if "[UNK]" in self.vocab else next(iter(self.vocab))
        self.outputs = {item["name"] for item in config.get("output", [])}

    def encode(self, text: str) -> list[int]:
        words = basic_tokens(text, self.lower)
        tokens = [p for w in words for p in wordpiece(w, self.vocab, self.unknown)]
        tokens = ["[CLS]", *tokens[: self.max_length - 2], "[SEP]"]
        return [self.vocab.get(t, self.vocab[self.unknown]) for t in tokens]

    def execute(self, requests: list[Any]) -> list[Any]:
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "text").as_numpy()
            rows = text.reshape(text.shape[0], -1)[:, 0]
            ids = np.full((len(rows), self.max_length), self.vocab.get("[PAD]", 0), np.int64)
            mask = np.zeros((len(rows), self.max_length), np.int64)
            for index, item in enumerate(rows):
                value = item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
                encoded = self.encode(value)
                ids[index, : len(encoded)] = encoded
                mask[index, : len(encoded)] = 1
            values = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
            outputs = [pb_utils.Tensor(k, v) for k, v in values.items() if k in self.outputs]
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses

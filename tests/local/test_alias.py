"""``infra.targets.local.alias``: the alias's directory, and Triton's answers renamed back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.targets.local import alias
from infra.targets.local.upstream import UpstreamResponse
from packager.manifest import Manifest
from tdk.errors import ConfigError


def _entry(release: Path, target: str) -> object:
    return Manifest.from_json((release / "manifest.json").read_text()).by_target_model(target)


def test_an_alias_is_never_a_release_name_and_ensembles_have_none(release: Path) -> None:
    from packager.names import name_problem

    tokenizer = _entry(release, "tokenizer-0.tar.gz")
    assert alias.alias_of(tokenizer) == "tokenizer-0~"  # type: ignore[arg-type]
    assert name_problem("tokenizer-0~") is not None  # no release model can be named so
    assert alias.aliasable(tokenizer)  # type: ignore[arg-type]
    assert not alias.aliasable(_entry(release, "text_pipeline-0.tar.gz"))  # type: ignore[arg-type]


def _model(repository: Path, name: str, config: str | None = None) -> Path:
    model = repository / name
    (model / "1").mkdir(parents=True)
    (model / "1" / "model.py").write_text("weights")
    (model / "extra.txt").write_text("beside the config")
    (model / "config.pbtxt").write_text(config or f'name: "{name}"\nbackend: "python"\n')
    return model


class _Entry:
    def __init__(self, name: str) -> None:
        self.name, self.contains = name, ()


def test_the_alias_directory_links_the_files_and_renames_only_its_own_config(
    tmp_path: Path,
) -> None:
    model = _model(tmp_path, "m")
    name = alias.make(tmp_path, _Entry("m"))  # type: ignore[arg-type]
    copy = tmp_path / name
    assert (copy / "1" / "model.py").stat().st_ino == (model / "1" / "model.py").stat().st_ino
    assert (copy / "extra.txt").read_text() == "beside the config"
    assert 'name: "m~"' in (copy / "config.pbtxt").read_text()
    assert 'name: "m"' in (model / "config.pbtxt").read_text()  # the original untouched
    alias.remove(tmp_path, name)
    assert not copy.exists() and model.exists()
    alias.remove(tmp_path, "m")  # never the model's own directory
    assert model.exists()


def test_an_alias_that_cannot_be_made_leaves_nothing(tmp_path: Path) -> None:
    _model(tmp_path, "m", config="name: 'm'\nnot_a_field: 1\n")
    with pytest.raises(ConfigError):
        alias.make(tmp_path, _Entry("m"))  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def _answer(head: dict[str, object], raw: bytes = b"") -> UpstreamResponse:
    text = json.dumps(head, separators=(",", ":")).encode()
    headers = {"content-type": "application/octet-stream"}
    if raw:
        headers["inference-header-content-length"] = str(len(text))
    return UpstreamResponse(200, headers, text + raw)


def test_a_binary_answer_is_renamed_in_its_json_header_and_its_length_follows() -> None:
    raw = b'"model_name":"m~"' + bytes(range(256))  # tensor bytes that look like the name
    head = {"model_name": "m~", "model_version": "1", "outputs": [{"name": "y"}]}
    answer = alias.renamed(_answer(head, raw), "m~", "m")
    size = int(answer.headers["inference-header-content-length"])
    assert json.loads(answer.body[:size]) == head | {"model_name": "m"}
    assert answer.body[size:] == raw  # the tensor bytes untouched


def test_a_json_answer_is_renamed_also_when_not_in_tritons_compact_form() -> None:
    head = {"model_name": "m~", "outputs": [{"name": "y", "data": [1]}]}
    compact = alias.renamed(_answer(head), "m~", "m")
    assert json.loads(compact.body) == head | {"model_name": "m"}
    spaced = UpstreamResponse(200, {}, json.dumps(head, indent=1).encode())
    assert json.loads(alias.renamed(spaced, "m~", "m").body)["model_name"] == "m"
    other = _answer({"model_name": "n~"})  # another model's answer is left alone
    assert alias.renamed(other, "m~", "m") == other
    garbage = UpstreamResponse(200, {}, b"\xff not json")
    assert alias.renamed(garbage, "m~", "m") == garbage


def test_a_streamed_answer_is_renamed_wherever_the_chunks_split_it() -> None:
    stream = b'data: {"model_name":"m~","text_output":"a"}\n\ndata: {"model_name":"m~"}\n\n"m~'
    expected = stream.replace(b'"model_name":"m~"', b'"model_name":"m"')
    for first in range(len(stream) + 1):
        for second in range(first, len(stream) + 1, 7):
            renamer = alias.Renamer("m~", "m")
            parts = (stream[:first], stream[first:second], stream[second:])
            out = b"".join(renamer.feed(part) for part in parts) + renamer.flush()
            assert out == expected, (first, second)
    assert alias.Renamer("m~", "m").in_error(b"unknown model 'm~'") == b"unknown model 'm'"


def test_a_generate_stream_from_the_alias_reaches_the_client_renamed() -> None:
    """``generate._relay`` with the alias's renamer: what Triton streamed for ``m~`` reaches the
    caller for ``m``, a ``model_name`` split across two chunks included, and nothing held back
    at the end."""
    import asyncio

    from infra.targets.local import generate

    async def relay() -> list[dict[str, object]]:
        upstream = generate._Upstream()
        upstream.head.set_result((200, [(b"content-type", b"text/event-stream")]))
        for chunk in (b'data: {"model_name":"m', b'~","text_output":"hi"}\n\n', None):
            upstream.chunks.put_nowait(chunk)
        sent: list[dict[str, object]] = []

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        renamer = alias.Renamer("m~", "m")
        assert await generate._relay(upstream, send, 10, bytearray(), renamer) is None
        return sent

    sent = asyncio.run(relay())
    body = b"".join(m["body"] for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]
    assert body == b'data: {"model_name":"m","text_output":"hi"}\n\n'
    assert sent[-1] == {"type": "http.response.body", "body": b""}

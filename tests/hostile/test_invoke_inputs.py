"""Hostile inputs to `tdk invoke`: each row a clear message and exit code, nothing sent or
written. Plus `tdk invoke --grpc` against the real local Triton's gRPC port."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.hostile.endpoint_helpers import snapshot
from tests.local.local_helpers import Endpoint, make_release, start_endpoint

pytestmark = pytest.mark.e2e
runner = CliRunner()
MAX_BODY = 200_000  # one 3x224x224 FP32 image (602 KB) is over it


@pytest.fixture(scope="module")
def endpoint(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    store = tmp_path_factory.mktemp("store")
    make_release(
        sample_repo, store, copies=1, only=("image_classifier", "tokenizer", "text_classifier")
    )
    state = tmp_path_factory.mktemp("state")
    # its Triton on the host's loopback: the gRPC test below calls it directly
    running = start_endpoint(
        store, state, "--max-body-bytes", str(MAX_BODY), "--triton-netns", "off"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_STATE_DIR", str(state))
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module")
def npy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("npy")
    image = (1, 3, 224, 224)
    np.save(folder / "int64.npy", np.ones(image, np.int64))
    np.save(folder / "float64.npy", np.ones(image, np.float64))
    np.save(folder / "float32.npy", np.ones(image, np.float32))
    np.save(folder / "small.npy", np.ones((1, 3, 10, 10), np.float32))
    (folder / "broken.npy").write_bytes(b"not numpy")
    return folder


IMAGE = ["--target-model", "image_classifier-0.tar.gz"]
TEXT = ["--target-model", "text_classifier-0.tar.gz"]
ROWS: list[tuple[str, list[str], int, list[str]]] = [
    # (id, arguments ({npy} = the folder of .npy files), exit code, message fragments)
    ("int64-for-fp32", [*IMAGE, "-i", "input=@{npy}/int64.npy"], 2, ["'input'", "FP32", "int64"]),
    ("float64-for-fp32", [*IMAGE, "-i", "input=@{npy}/float64.npy"], 2, ["FP32", "float64"]),
    ("wrong-shape", [*IMAGE, "-i", "input=@{npy}/small.npy"], 2, ["shape [1, 3, 10, 10]"]),
    ("not-npy", [*IMAGE, "-i", "input=@{npy}/broken.npy"], 2, ["cannot read"]),
    ("missing-file", [*IMAGE, "-i", "input=@{npy}/nowhere.npy"], 2, ["cannot read"]),
    ("not-json", [*IMAGE, "-i", "input=[1,"], 2, ["not JSON"]),
    ("json-strings-for-fp32", [*IMAGE, "-i", 'input=["a"]'], 2, ["expects FP32 numbers"]),
    ("json-fraction-for-int32", [*TEXT, "-i", "token_ids=[1.5]"], 2, ["do not fit"]),
    ("unknown-input", [*IMAGE, "-i", "pixels=[1]"], 2, ["no such input"]),
    ("no-inputs", IMAGE, 2, ["no inputs given"]),
    ("unknown-target-model", ["--target-model", "nope.tar.gz", "--text", "x"], 1, ["not in this"]),
    ("unknown-endpoint", [*IMAGE, "--endpoint", "other", "--text", "x"], 2, ["no local endpoint"]),
    ("path-endpoint", [*IMAGE, "--endpoint", "../x", "--text", "x"], 2, ["not a valid endpoint"]),
    (
        "body-over-limit",
        [*IMAGE, "-i", "input=@{npy}/float32.npy"],
        1,
        ["payload limit", "6 MB per request"],
    ),
]


@pytest.mark.parametrize(
    ("args", "code", "fragments"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_bad_invoke_input_is_refused(
    endpoint: Endpoint,
    npy: Path,
    args: list[str],
    code: int,
    fragments: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # an empty working directory: anything written there shows
    repository = endpoint.state_dir / "local-local" / "repository"
    watched = [endpoint.store, npy, tmp_path, endpoint.cwd, repository]
    before = snapshot(*watched)
    loaded = endpoint.status()["loaded"]
    result = runner.invoke(app, ["invoke", *[a.format(npy=npy) for a in args]])
    assert result.exit_code == code, result.output
    text = " ".join(result.output.split())
    for fragment in fragments:
        assert fragment in text, text
    assert "Traceback" not in result.output
    assert "--endpoint" not in text or "--endpoint" in args  # no misleading hint
    assert endpoint.status()["loaded"] == loaded  # refused before any model loaded
    assert snapshot(*watched) == before


def test_invoke_grpc_against_the_local_triton(endpoint: Endpoint) -> None:
    """`tdk invoke --target gke --grpc` gives the same outputs as the HTTP paths."""
    text = ["--target-model", "tokenizer-0.tar.gz", "--text", "hello grpc", "--json"]
    local = runner.invoke(app, ["invoke", *text])  # loads tokenizer-0 into the local Triton
    assert local.exit_code == 0, local.output
    ports = endpoint.triton()
    store = ["--release", str(endpoint.store)]
    grpc_url = f"127.0.0.1:{ports['grpc_port']}"
    grpc = runner.invoke(
        app, ["invoke", "--target", "gke", "--grpc", "--url", grpc_url, *store, *text]
    )
    assert grpc.exit_code == 0, grpc.output
    http_url = f"http://127.0.0.1:{ports['http_port']}"
    http = runner.invoke(app, ["invoke", "--target", "gke", "--url", http_url, *store, *text])
    assert http.exit_code == 0, http.output
    outputs: list[dict[str, Any]] = [
        json.loads(result.output)["outputs"] for result in (local, grpc, http)
    ]
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[1]["token_ids"]["shape"] == [1, 128]
    grpc_args = ["invoke", "--target", "gke", "--grpc", "--url", grpc_url, *store]
    wrong = runner.invoke(app, [*grpc_args, "--target-model", "tokenizer-0", "-i", "nope=[1]"])
    assert wrong.exit_code == 2 and "no such input" in wrong.output

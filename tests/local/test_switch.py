"""`tdk local switch`: a running local endpoint moves to another release (a rollback to an
earlier one) under load and loses no request (issue 40 item 3). Real Triton; the load is a
bounded count of invokes from a few threads, and the switch happens once each thread has had
an answer (an event, not a sleep)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.deployment import Given, open_deployment
from infra.targets.local.control import request_switch
from infra.targets.local.endpoint_state import read_state
from tdk.errors import TdkError
from tests.local.local_helpers import make_release, start_endpoint

THREADS = 3
PER_THREAD = 25


def _load(url: str, model: object, answered: threading.Barrier, failures: list[str]) -> None:
    target = SageMakerRuntimeTarget("switch", endpoint_url=url, local=True)
    try:
        for index in range(PER_THREAD):
            try:
                target.infer(model, example_inputs(model))  # type: ignore[arg-type]
            except Exception as exc:  # every failure counts, whatever it is
                failures.append(repr(exc))
            if index == 0:
                answered.wait(60)
    finally:
        target.close()


def test_switch_under_load_loses_no_request_and_refuses_a_bad_release(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new, broken = tmp_path / "old", tmp_path / "new", tmp_path / "broken"
    make_release(sample_repo, old, copies=1, only=("tokenizer",))
    manifest = make_release(sample_repo, new, copies=1, only=("tokenizer", "text_classifier"))
    shutil.copytree(new, broken)
    only_new = next(m for m in manifest.models if "text_classifier" in m.target_model)
    (broken / only_new.archive).unlink()
    state_dir = tmp_path / "state"
    running = start_endpoint(old, state_dir, name="switch")
    monkeypatch.setenv("TDK_STATE_DIR", str(state_dir))
    try:
        state = read_state("switch")
        assert state is not None and state.control
        shared = running.manifest.models[0]
        answered = threading.Barrier(THREADS + 1)
        failures: list[str] = []
        threads = [
            threading.Thread(target=_load, args=(running.url, shared, answered, failures))
            for _ in range(THREADS)
        ]
        for thread in threads:
            thread.start()
        answered.wait(60)  # every thread has had one answer from the old release
        with pytest.raises(TdkError, match="missing"):
            request_switch(state, str(broken), None)
        assert running.status()["release"] == str(old)  # refused: still the old release
        answer = request_switch(state, str(new), None)
        for thread in threads:
            thread.join(120)
        assert failures == []
        assert answer["models"] == [m.target_model for m in manifest.models]
        status = running.status()
        assert status["release"] == str(new)
        # a deployment opened without --release reads the one the endpoint serves now, not the
        # one its state file was written with
        assert state.release == str(old)
        assert open_deployment(Given(endpoint="switch")).release == str(new)
        assert status["metrics"]["Invocations"] >= THREADS * PER_THREAD
        target = SageMakerRuntimeTarget("switch", endpoint_url=running.url, local=True)
        try:  # a model only the new release has answers: the next requests use it
            target.infer(only_new, example_inputs(only_new))
        finally:
            target.close()
        forged = type(state)(**{**state.__dict__, "control": "0" * 32})
        with pytest.raises(TdkError, match="control secret"):
            request_switch(forged, str(old), None)
        rollback = request_switch(state, str(old), None)  # and back: a rollback
        assert rollback["release"] == str(old) and running.status()["release"] == str(old)
    finally:
        running.stop()


def test_switch_without_a_running_endpoint_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    result = CliRunner().invoke(
        app, ["local", "switch", "--endpoint", "nope", "--release", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "no local endpoint named 'nope' is running" in result.output


def _with_a_link(release: Path) -> None:
    """Each archive of ``release`` rebuilt with a symbolic link in it, the manifest's sha256
    and size following, as a release from elsewhere could be."""
    import hashlib
    import io
    import json
    import tarfile

    document = json.loads((release / "manifest.json").read_text())
    for entry in document["models"]:
        path = release / entry["archive"]
        with tarfile.open(path, "r:gz") as tar:
            members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar]  # type: ignore[union-attr]
        link = tarfile.TarInfo(f"{members[0][0].name.split('/')[0]}/1/vocab.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        with tarfile.open(path, "w:gz") as tar:
            for member, data in [*members, (link, None)]:
                tar.addfile(member, io.BytesIO(data) if data is not None else None)
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        entry["size"] = path.stat().st_size
    (release / "manifest.json").write_text(json.dumps(document))


def test_switch_refuses_a_release_whose_archive_holds_a_link(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was switched to, then every invoke failed (issue 47 item 7): checked as the loader
    checks an archive, before the switch."""
    old, linked = tmp_path / "old", tmp_path / "linked"
    make_release(sample_repo, old, copies=1, only=("tokenizer",))
    make_release(sample_repo, linked, copies=1, only=("text_classifier",))
    _with_a_link(linked)
    state_dir = tmp_path / "state"
    running = start_endpoint(old, state_dir, name="switch-link")
    monkeypatch.setenv("TDK_STATE_DIR", str(state_dir))
    try:
        state = read_state("switch-link")
        assert state is not None
        with pytest.raises(TdkError, match="is a link or special file") as refused:
            request_switch(state, str(linked), None)
        assert "not switched" in refused.value.message
        assert running.status()["release"] == str(old)
        shared = running.manifest.models[0]
        target = SageMakerRuntimeTarget("switch-link", endpoint_url=running.url, local=True)
        try:  # still serving the old release
            target.infer(shared, example_inputs(shared))
        finally:
            target.close()
    finally:
        running.stop()

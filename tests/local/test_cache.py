"""Archive fetch/verify/extract and the ONNX Runtime adapter, without a Triton server."""

from __future__ import annotations

import hashlib
import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from infra.targets.local.cache import (
    MAX_MEMBERS,
    ArchiveRejected,
    extract_safely,
    fetch_verified,
    install,
    remove_dirs,
)
from infra.triton_runtime import adapter
from infra.triton_runtime.adapter import BackendUnavailable, adapt_model_dir
from packager.config import load_config
from packager.manifest import Manifest, ManifestModel
from packager.stores import open_store
from tdk.errors import UnsafeInputError
from tests.local.local_helpers import make_release


def _entry(name: str = "m", size: int = 0, sha: str = "") -> ManifestModel:
    return ManifestModel(
        target_model=f"{name}.tar.gz", name=name, source=name, copy=0, sha256=sha, size=size,
        archive=f"mme/{name}.tar.gz", backend="python", platform="", max_batch_size=0,
        inputs=(), outputs=(),
    )  # fmt: skip


def _archive(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            data = b"x" * member.size if member.isfile() else None
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, size: int = 3) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    "member",
    [
        _file("/etc/m/config.pbtxt"),
        _file("m/../../escape"),
        _file("other/config.pbtxt"),
        _link("m/1/model.onnx", "/etc/passwd", tarfile.SYMTYPE),
        _link("m/1/hard", "m/config.pbtxt", tarfile.LNKTYPE),
        _link("m/dev", "", tarfile.CHRTYPE),
    ],
    ids=["absolute", "dotdot", "outside", "symlink", "hardlink", "device"],
)
def test_unsafe_members_refused(tmp_path: Path, member: tarfile.TarInfo) -> None:
    archive = _archive(tmp_path / "a.tar.gz", [_file("m/config.pbtxt"), member])
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(UnsafeInputError):
        extract_safely(archive, dest, _entry(), max_bytes=1 << 20)
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("m/1/a\\b.txt", "a backslash in a file name is refused"),
        ("m/1/a\nb.txt", "a control character (a newline, a tab) is refused"),
        ("m/1/tab\there", "a control character"),
    ],
    ids=["backslash", "newline", "tab"],
)
def test_unportable_member_names_refused_with_the_reason(
    tmp_path: Path, name: str, fragment: str
) -> None:
    """What `tdk package` must never write; an archive from elsewhere gets a clear refusal."""
    archive = _archive(tmp_path / "a.tar.gz", [_file("m/config.pbtxt"), _file(name)])
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(UnsafeInputError, match="re-package") as info:
        extract_safely(archive, dest, _entry(), max_bytes=1 << 20)
    assert fragment in info.value.message and repr(name) in info.value.message
    assert not list(dest.rglob("*.txt")) and not list(dest.rglob("tab*"))


def test_extraction_is_bounded(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tar.gz", [_file("m/config.pbtxt", 2048)])
    (tmp_path / "out").mkdir()
    with pytest.raises(ArchiveRejected, match="more than the 1000 bytes of disk cache"):
        extract_safely(archive, tmp_path / "out", _entry(), max_bytes=1000)


def test_sha_mismatch_refused_and_deleted(sample_repo: Path, tmp_path: Path) -> None:
    manifest = make_release(sample_repo, tmp_path / "store", copies=1, only=("tokenizer",))
    entry = manifest.models[0]
    store = open_store(str(tmp_path / "store"))
    assert fetch_verified(store, entry, tmp_path / "dl").is_file()  # the good one passes
    bad = replace(entry, sha256=hashlib.sha256(b"other").hexdigest())
    with pytest.raises(ArchiveRejected, match="sha256"):
        fetch_verified(store, bad, tmp_path / "dl2")
    assert list((tmp_path / "dl2").iterdir()) == []


def test_install_adapts_onnxruntime_with_identical_io(sample_repo: Path, tmp_path: Path) -> None:
    manifest: Manifest = make_release(sample_repo, tmp_path / "store", 1, only=("text_classifier",))
    entry = manifest.models[0]
    repository = tmp_path / "repository"
    repository.mkdir()
    result = install(
        open_store(str(tmp_path / "store")), entry, repository, tmp_path / "w", 1 << 30
    )
    assert result.dirs == ("text_classifier-0",)
    original = load_config(sample_repo / "text_classifier" / "config.pbtxt")
    adapted = load_config(repository / "text_classifier-0" / "config.pbtxt")
    assert adapted.backend == "python" and not adapted.platform
    assert list(adapted.input) == list(original.input)
    assert list(adapted.output) == list(original.output)
    assert adapted.max_batch_size == original.max_batch_size
    assert adapted.dynamic_batching == original.dynamic_batching
    version = repository / "text_classifier-0" / "1"
    assert (version / "model.onnx").is_file() and (version / "model.py").is_file()
    # model.py is the adapter module ruff/mypy/tests see, and reads the parameter adapter sets
    module = Path(adapter.__file__).with_name("onnx_adapter_model.py")
    assert (version / "model.py").read_bytes() == module.read_bytes()
    assert f'FILENAME_PARAMETER = "{adapter.ONNX_FILENAME_PARAMETER}"' in module.read_text()
    assert adapted.parameters[adapter.ONNX_FILENAME_PARAMETER].string_value == "model.onnx"


def test_manifest_names_cannot_reach_outside_the_repository(tmp_path: Path) -> None:
    """Every deletion is checked: a hostile model name never removes anything outside."""
    from infra.targets.local import workdir
    from tdk.errors import UnsafeInputError

    repository = tmp_path / "work" / "repository"
    repository.mkdir(parents=True)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "data.txt").write_text("keep")
    (repository / "link").symlink_to(outside)
    for name in ("../../precious", "link", ".", ""):
        with pytest.raises(UnsafeInputError, match="not inside the endpoint's work dir"):
            remove_dirs(repository, (name,))
    assert (outside / "data.txt").read_text() == "keep"
    with pytest.raises(UnsafeInputError):
        workdir.remove(tmp_path / "work", tmp_path / "work")


def test_tensorrt_needs_a_gpu_runtime(tmp_path: Path) -> None:
    model = tmp_path / "plan"
    model.mkdir()
    (model / "config.pbtxt").write_text('name: "plan"\nplatform: "tensorrt_plan"\n')
    with pytest.raises(BackendUnavailable, match="needs a GPU runtime"):
        adapt_model_dir(model)


def test_gpu_instance_groups_run_on_cpu(tmp_path: Path) -> None:
    model = tmp_path / "py"
    model.mkdir()
    text = 'name: "py"\nbackend: "python"\ninstance_group { kind: KIND_GPU count: 2 gpus: 0 }\n'
    (model / "config.pbtxt").write_text(text)
    adapt_model_dir(model)
    group = load_config(model / "config.pbtxt").instance_group[0]
    assert (group.kind, group.count, list(group.gpus)) == (group.KIND_CPU, 2, [])


def test_disk_cache_is_bounded_and_keeps_shared_directories(tmp_path: Path) -> None:
    from infra.targets.local.cache import DiskCache, Extracted

    cache = DiskCache(tmp_path, limit=250)
    entries = [replace(_entry(f"m{i}"), contains=("shared", f"m{i}")) for i in range(3)]
    for entry in entries:
        for name in entry.contains:
            (tmp_path / name).mkdir(exist_ok=True)
        cache.add(entry, Extracted(entry.contains, 100, 0.0, 0.0))
    assert cache.shared() == {"shared", "m0", "m1", "m2"}
    cache.trim(entries[:2])  # 300 bytes > 250: the least recently used one goes
    assert not cache.has(entries[0]) and cache.has(entries[1])
    assert not (tmp_path / "m0").exists() and (tmp_path / "shared").exists()
    cache.drop(entries[1])
    cache.drop(entries[2])
    assert not (tmp_path / "shared").exists()  # removed with its last user


def test_an_archive_of_too_many_members_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200,000 empty files took 37 s to extract (issue 47 item 7): refused past the bound."""
    from infra.targets.local import cache

    monkeypatch.setattr(cache, "MAX_MEMBERS", 50)
    members = [_file("m/config.pbtxt"), *(_file(f"m/1/f{i}", 0) for i in range(60))]
    archive = _archive(tmp_path / "a.tar.gz", members)
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveRejected, match="more than 50 files and directories"):
        extract_safely(archive, dest, _entry(), max_bytes=1 << 20)
    assert len(list(dest.rglob("f*"))) < 50
    assert 1000 <= MAX_MEMBERS <= 100_000  # the bound itself: above any model, below 200k

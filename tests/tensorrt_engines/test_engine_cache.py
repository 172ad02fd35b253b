"""The engine cache in a release store: keyed by (ONNX sha256, TensorRT, compute capability,
profile, precision), against the file store, S3 (moto's server) and GCS (the emulator)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from packager.stores import Store, open_store
from packager.tensorrt.engines import (
    ENGINE_FILE,
    ENGINES_PREFIX,
    LEGACY_PREFIX,
    RECORD_FILE,
    cached,
    engines_for,
    store_engine,
)
from tdk.errors import TdkError, UsageError
from tests.tensorrt_engines.helpers import fake_plan, model_dir, planned, record_for


@pytest.fixture(params=["file", "s3", "gs"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "file":
        return open_store(f"file://{tmp_path / 'release'}")
    if request.param == "s3":
        import boto3

        endpoint = request.getfixturevalue("moto_endpoint")
        bucket = f"tdk-{os.urandom(4).hex()}"
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
        return open_store(f"s3://{bucket}/releases/r1", endpoint_url=endpoint)
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    request.getfixturevalue("gcs_emulator")
    bucket = f"tdk-{os.urandom(4).hex()}"
    storage.Client(project="test", credentials=AnonymousCredentials()).create_bucket(bucket)
    return open_store(f"gs://{bucket}/releases/r1")


def test_a_stored_plan_is_found_by_its_key_and_only_by_it(store: Store, tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    build = planned(model)
    assert cached(store, build.key) is None
    plan = fake_plan()
    record = record_for(build, plan)
    store_engine(store, record, plan)
    assert cached(store, build.key) == record
    assert store.get_bytes(build.key.prefix + ENGINE_FILE) == plan
    assert engines_for(store, build.key.onnx_sha256, build.key.target) == [record]
    # each part of the key makes another entry: precision, profile
    assert cached(store, planned(model, fp16=True).key) is None
    assert cached(store, planned(model, opt_batch=1).key) is None


def test_an_entry_whose_plan_was_replaced_is_not_a_hit(store: Store, tmp_path: Path) -> None:
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    store_engine(store, record_for(build, plan), plan)
    store.put_bytes(build.key.prefix + ENGINE_FILE, b"another plan")
    assert cached(store, build.key) is None


def test_a_plan_outside_the_parity_tolerance_is_never_cached(store: Store, tmp_path: Path) -> None:
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    with pytest.raises(TdkError, match="parity"):
        store_engine(store, record_for(build, plan, passed=False), plan)
    assert store.list_keys(build.key.prefix) == []


def test_a_damaged_record_names_the_entry(tmp_path: Path) -> None:
    store = open_store(f"file://{tmp_path / 'release'}")
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    store_engine(store, record_for(build, plan), plan)
    store.put_bytes(build.key.prefix + RECORD_FILE, b"{not json")
    with pytest.raises(TdkError) as caught:
        cached(store, build.key)
    assert build.key.prefix in caught.value.message and "delete" in (caught.value.hint or "")


def test_a_builders_output_is_adopted_only_when_it_checks_out(store: Store, tmp_path: Path) -> None:
    """A SageMaker Processing job leaves plan.json and model.plan in <entry>output/ without
    tdk's checksum metadata; adopting checks them and caches them."""
    from packager.tensorrt.engines import OUTPUT_DIR, adopt_output

    model = model_dir(tmp_path)
    build = planned(model)
    plan = fake_plan()
    record = record_for(build, plan)
    store.put_bytes(build.key.prefix + OUTPUT_DIR + ENGINE_FILE, b"truncated")
    store.put_bytes(build.key.prefix + OUTPUT_DIR + RECORD_FILE, record.to_json().encode())
    with pytest.raises(TdkError, match="sha256"):
        adopt_output(store, build.key)
    assert cached(store, build.key) is None
    store.put_bytes(build.key.prefix + OUTPUT_DIR + ENGINE_FILE, plan)
    assert adopt_output(store, build.key) == record == cached(store, build.key)
    other = planned(model, fp16=True).key  # the fp32 build's output left under another key
    store.put_bytes(other.prefix + OUTPUT_DIR + RECORD_FILE, record.to_json().encode())
    with pytest.raises(TdkError, match="another build"):
        adopt_output(store, other)


def _move_to_legacy(store: Store, key_prefix: str) -> str:
    """What a release cached by tdk before 2026-12-07 holds: the same entry under ``plans/``."""
    legacy = LEGACY_PREFIX + key_prefix.removeprefix(ENGINES_PREFIX)
    for name in store.list_keys(key_prefix):
        store.put_bytes(legacy + name.removeprefix(key_prefix), store.get_bytes(name))
        store.delete(name)
    return legacy


def test_an_engine_cached_under_the_old_plans_prefix_is_still_read(
    store: Store, tmp_path: Path
) -> None:
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    record = record_for(build, plan)
    store_engine(store, record, plan)
    assert build.key.prefix.startswith(ENGINES_PREFIX)  # written in the new layout only
    legacy = _move_to_legacy(store, build.key.prefix)
    assert store.list_keys(ENGINES_PREFIX) == [] and store.list_keys(legacy)
    assert cached(store, build.key) == record
    assert engines_for(store, build.key.onnx_sha256, build.key.target) == [record]
    store.put_bytes(legacy + ENGINE_FILE, b"another plan")  # the old layout is checked alike
    assert cached(store, build.key) is None


def test_an_engine_in_both_layouts_is_one_engine(tmp_path: Path) -> None:
    store = open_store(f"file://{tmp_path / 'release'}")
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    record = record_for(build, plan)
    store_engine(store, record, plan)
    _move_to_legacy(store, build.key.prefix)
    store_engine(store, record, plan)
    assert engines_for(store, build.key.onnx_sha256, build.key.target) == [record]


def test_a_planted_entry_under_the_old_prefix_is_refused_naming_it(tmp_path: Path) -> None:
    store = open_store(f"file://{tmp_path / 'release'}")
    build = planned(model_dir(tmp_path))
    plan = fake_plan()
    store_engine(store, record_for(build, plan), plan)
    legacy = _move_to_legacy(store, build.key.prefix)
    store.put_bytes(legacy + "plan.sig", b"0" * 64 + b"\n")
    with pytest.raises(UsageError, match=f"write {LEGACY_PREFIX}"):
        engines_for(store, build.key.onnx_sha256, build.key.target)

"""bench/mme_k8s.py in a short run: replicas behind HAProxy join and leave with no failed
request, and no replica ever holds more than its budget (issue 46 item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bench.smoke import run_script

pytestmark = pytest.mark.e2e


@pytest.mark.skipif(
    shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None,
    reason="haproxy is not installed (make setup)",
)
def test_bench_mme_k8s_runs(tmp_path: Path) -> None:
    run_script("mme_k8s.py", tmp_path)

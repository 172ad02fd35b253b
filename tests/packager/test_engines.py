"""A packaged vLLM model reports its engine metrics (REPORT_CUSTOM_METRICS), which KEDA reads."""

from __future__ import annotations

from pathlib import Path

from packager.config import load_config
from packager.engines import REPORT_CUSTOM_METRICS, engines_of
from packager.rename import lay_out_copies
from packager.repository import discover

VLLM_CONFIG = 'name: "{name}"\nbackend: "vllm"\nmodel_transaction_policy {{ decoupled: true }}\n'


def _vllm(repo: Path, name: str, extra: str = "") -> None:
    (repo / name / "1").mkdir(parents=True)
    (repo / name / "1" / "model.json").write_text('{"model": "m"}')
    (repo / name / "config.pbtxt").write_text(VLLM_CONFIG.format(name=name) + extra)


def test_vllm_copies_get_engine_metrics_others_do_not(tmp_path: Path) -> None:
    _vllm(tmp_path, "chat")
    off = 'parameters { key: "REPORT_CUSTOM_METRICS" value: { string_value: "false" } }\n'
    _vllm(tmp_path, "quiet", off)
    layouts = {layout.name: layout for layout in lay_out_copies(discover(tmp_path), copies=1)}
    chat = layouts["chat-0"].served.config
    assert chat.parameters[REPORT_CUSTOM_METRICS].string_value == "true"
    quiet = layouts["quiet-0"].served.config  # the repository's own choice is kept
    assert quiet.parameters[REPORT_CUSTOM_METRICS].string_value == "false"
    source = load_config(tmp_path / "chat" / "config.pbtxt")
    assert REPORT_CUSTOM_METRICS not in source.parameters  # the source is never edited


def test_sample_models_are_untouched(sample_repo: Path) -> None:
    for layout in lay_out_copies(discover(sample_repo), copies=1):
        assert REPORT_CUSTOM_METRICS not in layout.served.config.parameters


def test_engines_of_backends() -> None:
    assert engines_of(["python", "tensorrtllm", "vllm", "vllm"]) == ("vllm", "tensorrtllm")
    assert engines_of(["onnxruntime"]) == ()

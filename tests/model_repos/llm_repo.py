"""The sample LLM (``generate.py --with llm``) alone in a repository, for tests that serve it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_generator


def llm_repo(out: Path) -> Path:
    """Write only the ``llm`` sample model under ``out``; returns ``out``."""
    load_generator().write_extra(out, "llm")
    return out

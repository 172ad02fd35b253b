"""The output formats of ``tdk validate``: human (ruff style), JSON, SARIF 2.1.0 (GitHub code
scanning) and GitHub workflow-command annotations. Pure functions from findings to text."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packager.validate.findings import Finding
from packager.validate.rules import RULES, Rule

FORMATS = ("human", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://github.com/triton-deploy-kit/tdk/blob/main/docs/rules.md"


def relative(file: str) -> str:
    """``file`` relative to the working directory when it lies below it (forward slashes)."""
    rel = os.path.relpath(file)
    return Path(file if rel.startswith("..") else rel).as_posix()


def _where(finding: Finding) -> str:
    path = relative(finding.file)
    return f"{path}:{finding.line}:{finding.col}" if finding.line else path


def human(findings: Sequence[Finding]) -> str:
    """``path:line:col: CODE message`` and an indented hint line per finding, then a summary."""
    if not findings:
        return "valid: no findings\n"
    lines = []
    for f in findings:
        label = "" if f.severity == "error" else "warning: "
        lines.append(f"{_where(f)}: {f.code} {label}{f.field}: {f.message}")
        lines.append(f"    hint: {f.fix}")
    errors = sum(f.severity == "error" for f in findings)
    lines.append(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines) + "\n"


def as_json(findings: Sequence[Finding]) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(findings: Sequence[Finding]) -> str:
    """GitHub Actions workflow commands: one ``::error``/``::warning`` annotation each."""
    lines = []
    for f in findings:
        props = [f"file={_escape_property(relative(f.file))}"]
        if f.line:
            props += [f"line={f.line}", f"col={f.col}"]
        props.append(f"title={_escape_property(f.code)}")
        text = _escape_data(f"{f.field}: {f.message} (fix: {f.fix})")
        lines.append(f"::{f.severity} {','.join(props)}::{text}")
    return "\n".join(lines) + ("\n" if lines else "")


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.triton},
        "help": {"text": rule.fix},
        "helpUri": rule.source if rule.source.startswith("http") else TOOL_URI,
        "defaultConfiguration": {"level": rule.severity},
    }


def _sarif_result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    region = {"startLine": finding.line, "startColumn": max(finding.col, 1)} if finding.line else {}
    location: dict[str, Any] = {"artifactLocation": {"uri": relative(finding.file)}}
    if region:
        location["region"] = region
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": finding.severity,
        "message": {"text": f"{finding.field}: {finding.message} (fix: {finding.fix})"},
        "locations": [{"physicalLocation": location}],
    }
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    return result


def sarif(findings: Sequence[Finding], version: str) -> str:
    """One SARIF 2.1.0 log with a single run; every registered rule is described."""
    rules = sorted(RULES.values(), key=lambda r: r.code)
    index = {rule.code: i for i, rule in enumerate(rules)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tdk validate",
                        "version": version,
                        "informationUri": TOOL_URI,
                        "rules": [_sarif_rule(rule) for rule in rules],
                    }
                },
                "results": [_sarif_result(f, index) for f in findings],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def render(fmt: str, findings: Sequence[Finding], version: str) -> str:
    if fmt == "json":
        return as_json(findings)
    if fmt == "sarif":
        return sarif(findings, version)
    if fmt == "github":
        return github(findings)
    return human(findings)

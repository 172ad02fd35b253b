"""What ``tdk validate`` reports: one Finding per problem, naming file, position, rule, problem
and fix. Also the small helpers every rule module shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from packager.validate.rules import Severity, severity_of

__all__ = ["WILDCARD", "Finding", "Severity", "Sink", "dims_problem", "finding", "has_errors"]
WILDCARD = -1  # Triton's variable-size dimension


@dataclass(frozen=True)
class Finding:
    """One problem in one model: ``error`` stops Triton (or tdk) from serving it.

    A finding with a rule code is made with ``finding`` (or ``Sink.report``), which takes its
    severity from the rule table; only findings without a code give ``severity`` themselves.

    ``field`` is the config field path (``input[0] (x).dims``); ``line``/``col`` (1-based) are
    where that field sits in ``file`` when it is a ``config.pbtxt``, else 0.
    """

    file: str
    field: str
    message: str
    fix: str
    severity: Severity = "error"
    model: str = ""
    code: str = ""
    line: int = 0
    col: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def at(self, line: int, col: int) -> Finding:
        return replace(self, line=line, col=col)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        return f"{where}: {self.code} {self.field}: {self.message} (fix: {self.fix})"


def finding(
    code: str,
    file: str | Path,
    field: str,
    message: str,
    fix: str,
    model: str = "",
    line: int = 0,
    col: int = 0,
) -> Finding:
    """A finding of rule ``code``, with the severity the rule table gives it."""
    return Finding(str(file), field, message, fix, severity_of(code), model, code, line, col)


@dataclass
class Sink:
    """Collects the findings of one model; ``file`` is where they point unless told otherwise."""

    model: str
    file: Path
    found: list[Finding] = field(default_factory=list)

    def report(
        self, code: str, field: str, message: str, fix: str, file: Path | None = None
    ) -> None:
        """Record a finding of rule ``code``; its severity is the rule table's."""
        self.found.append(finding(code, file or self.file, field, message, fix, self.model))


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def dims_problem(dims: Sequence[int]) -> str | None:
    """Why Triton rejects ``dims`` (0 or below -1), None when it accepts them."""
    bad = [d for d in dims if d < 1 and d != WILDCARD]
    if bad:
        return f"has dimension {bad[0]}; each must be >= 1, or -1 for a variable size"
    return None

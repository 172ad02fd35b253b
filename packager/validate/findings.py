"""What ``tdk validate`` reports: one Finding per problem, naming file, field, problem and fix.

Also the small helpers every ``validate_*`` module shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning"]
WILDCARD = -1  # Triton's variable-size dimension


@dataclass(frozen=True)
class Finding:
    """One problem in one model: ``error`` stops Triton (or tdk) from serving it."""

    file: str
    field: str
    message: str
    fix: str
    severity: Severity = "error"
    model: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.severity}: {self.file}: {self.field}: {self.message} (fix: {self.fix})"


@dataclass
class Sink:
    """Collects the findings of one model; ``file`` is where they point unless told otherwise."""

    model: str
    file: Path
    found: list[Finding] = field(default_factory=list)

    def error(self, field: str, message: str, fix: str, file: Path | None = None) -> None:
        self._add("error", field, message, fix, file)

    def warning(self, field: str, message: str, fix: str, file: Path | None = None) -> None:
        self._add("warning", field, message, fix, file)

    def _add(
        self, severity: Severity, field: str, message: str, fix: str, file: Path | None
    ) -> None:
        self.found.append(
            Finding(str(file or self.file), field, message, fix, severity, self.model)
        )


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def dims_problem(dims: Sequence[int]) -> str | None:
    """Why Triton rejects ``dims`` (0 or below -1), None when it accepts them."""
    bad = [d for d in dims if d < 1 and d != WILDCARD]
    if bad:
        return f"has dimension {bad[0]}; each must be >= 1, or -1 for a variable size"
    return None

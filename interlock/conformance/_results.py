"""What a conformance run found: failures, notes, and the fidelity-matrix observations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from interlock.conformance._compare import Outcome, worst
from interlock.transcript import JsonValue

Mode: TypeAlias = Literal["strict", "degrade"]
MODES: tuple[Mode, ...] = ("strict", "degrade")
CellKey: TypeAlias = tuple[str, str, str]
"""(source dialect, target, feature)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """One thing that does not hold: which vector, which check, which field, and why."""

    vector: str
    check: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.vector} [{self.check}] {self.field}: {self.message}"


def first_difference(actual: JsonValue, expected: JsonValue, path: str = "$") -> str | None:
    """The JSON path of the first place ``actual`` differs from ``expected`` (``None``: equal)."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        for key in [*expected, *(key for key in actual if key not in expected)]:
            if key not in actual or key not in expected:
                return f"{path}.{key}"
            found = first_difference(actual[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(actual, list) and isinstance(expected, list):
        for index, (a, b) in enumerate(zip(actual, expected, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return (
            None if len(actual) == len(expected) else f"{path}[{min(len(actual), len(expected))}]"
        )
    same = actual == expected and type(actual) is type(expected)
    return None if same else path


def value_at(document: JsonValue, path: str) -> JsonValue:
    """The value at a :func:`first_difference` path, or ``None`` when it is absent."""
    current = document
    for token in path.removeprefix("$").replace("[", ".[").split(".")[1:]:
        if token.startswith("[") and isinstance(current, list):
            index = int(token[1:-1])
            current = current[index] if index < len(current) else None
        elif isinstance(current, dict):
            current = current.get(token)
        else:
            return None
    return current


@dataclass(slots=True)
class Collector:
    """Mutable accumulation of one run's findings."""

    failures: list[Failure] = field(default_factory=list[Failure])
    notes: list[str] = field(default_factory=list[str])
    cells: dict[CellKey, dict[Mode, set[Outcome]]] = field(
        default_factory=dict[CellKey, dict[Mode, set[Outcome]]]
    )
    checks: int = 0
    causes: set[tuple[CellKey, Outcome, str]] = field(
        default_factory=set[tuple[CellKey, Outcome, str]]
    )
    """Why a strict translation degraded or refused a feature: (cell, outcome, code)."""

    def fail(self, vector: str, check: str, field_path: str, message: str) -> None:
        """Record a failure."""
        self.failures.append(Failure(vector=vector, check=check, field=field_path, message=message))

    def passed(self) -> None:
        """Count one check that held."""
        self.checks += 1

    def record(self, key: CellKey, mode: Mode, outcome: Outcome, code: str = "") -> None:
        """Record what happened to one feature in one translation (``code``: why it was
        degraded or refused, kept for strict translations)."""
        self.cells.setdefault(key, {"strict": set(), "degrade": set()})[mode].add(outcome)
        if mode == "strict" and outcome in ("degraded", "refused"):
            self.causes.add((key, outcome, code))


@dataclass(frozen=True, slots=True, kw_only=True)
class DialectSummary:
    """Per-dialect totals for the summary table."""

    dialect: str
    vectors: int
    checks: int
    failures: int
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteResult:
    """A finished run: it holds when there are no failures."""

    failures: tuple[Failure, ...]
    notes: tuple[str, ...]
    cells: Mapping[CellKey, Mapping[Mode, frozenset[Outcome]]]
    dialects: tuple[DialectSummary, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        """True when every check held."""
        return not self.failures

    def cell(self, key: CellKey) -> tuple[Outcome | None, Outcome | None]:
        """The least faithful outcome of a cell in strict and in degrade mode."""
        modes = self.cells.get(key, {})
        return worst(modes.get("strict", ())), worst(modes.get("degrade", ()))

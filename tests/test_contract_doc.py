"""docs/contract.md stays honest: every test it names exists, every covered row names one, and
(when the contract text is checked out beside the repository) every matrix row is listed once.

A row is matched by its scenario name: the contract's matrix lines start with the scenario,
then a space, then the invariant. Rows without a test may appear only under "Not yet covered".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "contract.md"
SEED = ROOT.parent / "shared" / "seeds" / "function-calling-loop-contract.md"
NOT_COVERED = "Not yet covered"
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
ROW_HEADERS = ("Scenario Required invariant Primary regression test", "Gap Tracking")


@dataclass(frozen=True)
class Row:
    scenario: str
    section: str
    tests: tuple[tuple[str, str], ...]


def document_rows(text: str) -> list[Row]:
    """Table rows of the document, with the ``##`` section each sits under."""
    rows: list[Row] = []
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if not line.startswith("| ") or line.startswith("| ---"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "Scenario":
            continue
        tests = tuple(TEST_REFERENCE.findall(line))
        rows.append(Row(scenario=cells[0], section=section, tests=tests))
    return rows


def seed_rows(text: str) -> list[str]:
    """Lines of the contract's scenario matrix (including its coverage-gap table)."""
    lines = text.splitlines()
    start = lines.index("Scenario-to-test matrix")
    rows: list[str] = []
    inside_table = False
    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("Minimum validation commands"):
            break
        if stripped in ROW_HEADERS:
            inside_table = True
        elif not stripped:
            inside_table = False
        elif inside_table:
            rows.append(stripped)
    return rows


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


ROWS = document_rows(DOC.read_text(encoding="utf-8"))


def test_every_row_is_covered() -> None:
    assert ROWS, "the document has no rows"
    uncovered = [row.scenario for row in ROWS if row.section == NOT_COVERED]
    assert uncovered == [], "rows without a test proving them"


def test_every_named_test_exists() -> None:
    missing = [
        f"{path}::{name}"
        for row in ROWS
        for path, name in row.tests
        if not (ROOT / path).is_file() or name not in defined_tests(ROOT / path)
    ]
    assert missing == []


def test_covered_rows_name_tests_and_uncovered_rows_name_none() -> None:
    without_tests = [row.scenario for row in ROWS if row.section != NOT_COVERED and not row.tests]
    assert without_tests == [], "a row without a test belongs under 'Not yet covered'"
    claimed = [row.scenario for row in ROWS if row.section == NOT_COVERED and row.tests]
    assert claimed == [], "a row naming a test belongs in a covered section"


def test_each_scenario_is_listed_once() -> None:
    scenarios = [row.scenario for row in ROWS]
    assert sorted({s for s in scenarios if scenarios.count(s) > 1}) == []


@pytest.mark.skipif(not SEED.is_file(), reason="the contract text is not checked out beside")
def test_every_matrix_row_of_the_contract_is_in_the_document() -> None:
    scenarios = [row.scenario for row in ROWS]
    matches = {
        line: [s for s in scenarios if line.startswith(f"{s} ") or line == s]
        for line in seed_rows(SEED.read_text(encoding="utf-8"))
    }
    assert len(matches) > 50, "the matrix was not found"
    assert [line for line, found in matches.items() if not found] == [], "rows missing"
    assert {line: found for line, found in matches.items() if len(found) > 1} == {}
    used = {s for found in matches.values() for s in found}
    assert [s for s in scenarios if s not in used] == [], "scenarios that are not matrix rows"

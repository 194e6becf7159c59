"""The map of real-traffic classes to gateway tests in ``docs/fidelity.md`` stays honest.

Every test it names exists, and lives in a module that starts ``interlock serve`` with the
harnesses of ``tests/gateway/serving.py`` and drives it with an official SDK (``openai``,
``google-genai`` or ``anthropic``): a class is listed only when a test sends it through the
running gateway from the client's side. Every row names at least one test.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from interlock.conformance._report_classes import CLASSES_SECTION

ROOT = Path(__file__).resolve().parents[2]
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
SDK_MODULES = frozenset({"openai", "google.genai", "google", "anthropic"})
HARNESSES = frozenset(
    {"serve_on_emulators", "serve", "serve_two_vendors", "app_on_loopback", "emulators_on_loopback"}
)


def rows() -> list[tuple[str, list[tuple[str, str]]]]:
    """``(class, [(path, test)…])`` of each table row of the section."""
    found: list[tuple[str, list[tuple[str, str]]]] = []
    for line in CLASSES_SECTION.splitlines():
        if not line.startswith("| ") or line.startswith(("| ---", "| class |")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found.append((cells[0], TEST_REFERENCE.findall(line)))
    return found


@cache
def module(path: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Top-level test functions, imported modules, and names imported from the harness."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    tests = frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    )
    imported: set[str] = set()
    harness: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            imported.add(node.module)
            if node.module == "tests.gateway.serving":
                harness.update(alias.name for alias in node.names)
    return tests, frozenset(imported), frozenset(harness)


def _sdks(imported: frozenset[str]) -> frozenset[str]:
    """The official SDKs among ``imported``, or imported by a ``tests.gateway`` helper."""
    found = imported & SDK_MODULES
    for name in imported:
        helper = ROOT / (name.replace(".", "/") + ".py")
        if (
            name.startswith("tests.gateway.")
            and name != "tests.gateway.serving"
            and helper.is_file()
        ):
            found |= module(str(helper.relative_to(ROOT)))[1] & SDK_MODULES
    return found


def problems(path: str, test: str) -> list[str]:
    """Why ``path::test`` is not a test through the gateway with an official SDK."""
    if not path.startswith("tests/gateway/") or not (ROOT / path).is_file():
        return [f"{path} is not a gateway test module"]
    defined, imported, harness = module(path)
    found: list[str] = []
    if test not in defined:
        found.append(f"{path} has no {test}")
    if not _sdks(imported):
        found.append(f"{path} imports no official SDK")
    if not harness & HARNESSES:
        found.append(f"{path} starts no gateway with tests/gateway/serving.py")
    return found


def test_the_section_is_in_the_published_matrix() -> None:
    published = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert CLASSES_SECTION in published
    assert len(rows()) >= 10


@pytest.mark.parametrize(("name", "tests"), rows(), ids=[name[:40] for name, _ in rows()])
def test_every_class_names_gateway_tests_that_exist(
    name: str, tests: list[tuple[str, str]]
) -> None:
    assert tests, f"{name}: no test named"
    assert [problem for path, test in tests for problem in problems(path, test)] == []


def test_the_check_catches_a_missing_test_and_a_test_without_sdk_or_gateway() -> None:
    assert problems("tests/gateway/test_serve_fidelity.py", "test_no_such_test") == [
        "tests/gateway/test_serve_fidelity.py has no test_no_such_test"
    ]
    assert problems(
        "tests/gateway/test_vault.py",
        "test_vault_misses_from_a_start_are_the_whole_historys_from_there",
    ) == [
        "tests/gateway/test_vault.py imports no official SDK",
        "tests/gateway/test_vault.py starts no gateway with tests/gateway/serving.py",
    ]
    assert problems("tests/codecs/test_fields.py", "test_responses_has_no_seed_and_says_so") != []

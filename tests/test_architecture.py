"""Dependencies point one way: transcript ← codecs ← emulators; codecs, core_loop ← gateway,
conformance."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "interlock"

ALLOWED = {
    "transcript": {"transcript"},
    "codecs": {"transcript", "codecs"},
    "core_loop": {"transcript", "core_loop"},
    "emulators": {"transcript", "codecs", "emulators"},
    "conformance": {"transcript", "codecs", "core_loop", "conformance"},
    "gateway": {"transcript", "codecs", "core_loop", "emulators", "gateway"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "interlock" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_point_one_way(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) - ALLOWED[package])
        for path in (ROOT / package).rglob("*.py")
        if imported_packages(path) - ALLOWED[package] - {"__version__"}
    }
    assert offenders == {}


def test_gateway_is_imported_by_nothing_below_it() -> None:
    for package in ("transcript", "codecs", "core_loop", "emulators"):
        for path in (ROOT / package).rglob("*.py"):
            assert "gateway" not in imported_packages(path), path

"""``interlock conformance``: arguments, exit status, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.conformance import main


def test_a_bad_vector_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gemini" / "broken.json"
    path.parent.mkdir()
    path.write_text("{not json", encoding="utf-8")
    assert main(["--vectors", str(tmp_path)]) == 2
    assert str(path) in capsys.readouterr().err


def test_an_unknown_format_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--format", "cohere"]) == 2
    assert "unknown dialect 'cohere'" in capsys.readouterr().err


def test_no_vectors_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--vectors", str(tmp_path)]) == 2
    assert "no vectors" in capsys.readouterr().err


def test_one_dialect_with_report_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "fidelity.md"
    status = main(["--format", "gemini", "--report", str(report), "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert status == (0 if document["ok"] else 1)
    assert list(document["matrix"]) == ["gemini"]
    assert captured.err.splitlines()[0].startswith("gemini ")
    assert "## From `gemini`" in report.read_text(encoding="utf-8")

"""``interlock conformance``: arguments, exit status, reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.conformance import main
from interlock.gateway.cli import main as interlock_main


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


def test_the_interlock_command_drafts_a_vector_canonical_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(__file__).resolve().parents[2] / "conformance" / "vectors" / "openai_chat"
    original = json.loads((source / "request_parallel_tool_calls.json").read_text("utf-8"))
    path = tmp_path / "openai_chat" / "request_parallel_tool_calls.json"
    path.parent.mkdir()
    path.write_text(json.dumps({k: v for k, v in original.items() if k != "canonical"}), "utf-8")
    assert interlock_main(["conformance", "--draft", str(path)]) == 0
    assert "drafted" in capsys.readouterr().out
    assert json.loads(path.read_text("utf-8"))["canonical"] == original["canonical"]

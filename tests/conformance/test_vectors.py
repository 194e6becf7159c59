"""Loading vectors: every problem is a clear error naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.conformance import DIALECTS, VectorError, load_vector, load_vectors
from interlock.conformance._vectors import check_dialect

REPOSITORY_VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "vectors"

GOOD = {
    "vector": 1,
    "dialect": "gemini",
    "kind": "request",
    "description": "d",
    "origin": "o",
    "wire": {"contents": []},
    "canonical": {"version": 1, "request": {"model": "m", "messages": []}},
}


def write(root: Path, dialect: str, text: str) -> Path:
    path = root / dialect / "case.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_vector_loads(tmp_path: Path) -> None:
    vector = load_vector(write(tmp_path, "gemini", json.dumps(GOOD)))
    assert vector.name == "gemini/case"
    assert vector.kind == "request"


def test_bad_json_names_the_file_and_position(tmp_path: Path) -> None:
    path = write(tmp_path, "gemini", '{"vector": 1,\n  "dialect": }')
    with pytest.raises(VectorError) as raised:
        load_vector(path)
    assert raised.value.path == path
    assert str(path) in str(raised.value)
    assert "invalid JSON at line 2" in str(raised.value)


def test_an_unknown_dialect_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "gemini", json.dumps({**GOOD, "dialect": "cohere"}))
    with pytest.raises(VectorError, match="unknown dialect 'cohere'") as raised:
        load_vector(path)
    assert str(path) in str(raised.value)


def test_an_unknown_dialect_directory_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "cohere", json.dumps(GOOD))
    with pytest.raises(VectorError, match="unknown dialect directory") as raised:
        load_vectors(tmp_path)
    assert raised.value.path == tmp_path / "cohere"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "events"}, "is not a gemini vector kind"),
        ({"dialect": "openai_chat"}, "but the file is under 'gemini'"),
        ({"vector": 2}, "unsupported format 2"),
        ({"origin": ""}, "origin: expected a non-empty string"),
        ({"traps": [38]}, "trap numbers 1-37"),
        ({"surprise": 1}, "unknown keys ['surprise']"),
    ],
)
def test_malformed_vectors_are_refused(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = write(tmp_path, "gemini", json.dumps({**GOOD, **change}))
    with pytest.raises(VectorError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_vector(path)


def test_missing_keys_are_listed(tmp_path: Path) -> None:
    document = {key: value for key, value in GOOD.items() if key != "canonical"}
    with pytest.raises(VectorError, match=r"missing keys \['canonical'\]"):
        load_vector(write(tmp_path, "gemini", json.dumps(document)))


def test_dialect_names_accept_both_spellings() -> None:
    assert check_dialect("openai-chat") == "openai_chat"
    with pytest.raises(ValueError, match="unknown dialect 'cohere'"):
        check_dialect("cohere")


def test_the_repository_vectors_load_and_cover_every_dialect() -> None:
    vectors = load_vectors(REPOSITORY_VECTORS)
    assert {vector.dialect for vector in vectors} == set(DIALECTS)
    assert all(vector.origin and vector.description for vector in vectors)

"""The real suite against the real codecs, and the published matrix being current.

The codecs are built in parallel with this suite; what the suite currently finds in them is
recorded in ``known_codec_findings.json`` (vector, check, field) and reported to their owners.
This test fails on any *new* finding; a fixed finding just disappears (and then the list
should shrink). ``interlock conformance`` itself exits non-zero while any finding remains.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from interlock.conformance import (
    SuiteResult,
    default_registry,
    load_vectors,
    markdown_matrix,
    run_suite,
)
from interlock.conformance._node import harness_dir

ROOT = Path(__file__).resolve().parents[2]
KNOWN = Path(__file__).parent / "known_codec_findings.json"


@cache
def real_suite() -> SuiteResult:
    registry, unavailable = default_registry()
    vectors = load_vectors(ROOT / "conformance" / "vectors")
    return run_suite(vectors, registry, unavailable=unavailable, harness=harness_dir(ROOT))


def finding_key(vector: str, check: str, field: str) -> tuple[str, str, str]:
    return (vector, check.split(" (")[0], field)


def test_no_new_codec_findings() -> None:
    known = {tuple(entry) for entry in json.loads(KNOWN.read_text(encoding="utf-8"))}
    new = [
        str(f)
        for f in real_suite().failures
        if finding_key(f.vector, f.check, f.field) not in known
    ]
    assert new == []


def test_every_dialect_has_a_codec_and_vectors() -> None:
    result = real_suite()
    assert [row.dialect for row in result.dialects] == [
        "openai_responses",
        "openai_chat",
        "gemini",
        "agui",
    ]
    assert all(row.vectors >= 5 and row.checks > 0 for row in result.dialects)
    assert not any("no " in f.message and f.check == "codec" for f in result.failures)


def test_docs_fidelity_is_current() -> None:
    """CI regenerates the matrix; ``interlock conformance --report docs/fidelity.md`` updates it."""
    published = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert markdown_matrix(real_suite()) == published

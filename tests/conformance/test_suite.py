"""The real suite against the real codecs, and the published matrix being current.

Every vector must hold for every codec: any failure (a silent drop, a lost signature, an
SDK-invalid payload) fails this test, exactly as it makes ``interlock conformance`` exit 1.
"""

from __future__ import annotations

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


@cache
def real_suite() -> SuiteResult:
    registry, unavailable = default_registry()
    vectors = load_vectors(ROOT / "conformance" / "vectors")
    return run_suite(vectors, registry, unavailable=unavailable, harness=harness_dir(ROOT))


def test_real_codecs_hold_on_every_vector() -> None:
    result = real_suite()
    assert [str(failure) for failure in result.failures] == []
    assert result.ok


def test_every_dialect_has_a_codec_and_vectors() -> None:
    result = real_suite()
    assert [row.dialect for row in result.dialects] == [
        "openai_responses",
        "openai_chat",
        "gemini",
        "anthropic",
        "agui",
    ]
    assert all(row.vectors >= 5 and row.checks > 0 for row in result.dialects)
    assert not any("no " in f.message and f.check == "codec" for f in result.failures)


def test_docs_fidelity_is_current() -> None:
    """``interlock conformance --corpus --report docs/fidelity.md`` updates it (the corpus
    section that follows the matrix is checked in ``test_corpus.py``)."""
    published = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert published.startswith(markdown_matrix(real_suite()) + "\n## Real-traffic corpus\n")

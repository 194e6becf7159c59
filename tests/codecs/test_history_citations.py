"""Citations in a request's history, per target dialect (the ``citation`` rows of
``docs/fidelity.md``): which request formats keep an assistant message's citations, and
that every other one drops them with a ``citation_dropped`` warning, never silently.

* OpenAI Responses keeps URL citations (``url_citation`` annotations) of an assistant
  message with its item id; an id-less message (every message from another dialect, whose
  ids never reach a Responses upstream) and document citations are dropped.
* Anthropic keeps the citations it issued (verbatim: ``encrypted_index``, documents); another
  provider's are dropped.
* Chat Completions (request assistant messages have no ``annotations``) and Gemini
  (``Content`` has no citation field) drop them all.
"""

from __future__ import annotations

import pytest

from interlock.codecs.registry import wire_codec
from interlock.transcript import (
    Citation,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    TranslationWarning,
)

TEXT = "The 2024 Games were in Paris."
WEB = Citation(url="https://olympics.example/paris", title="Paris", start=4, end=14)
DOCUMENT = Citation(url=None, title="Games report", start=0, end=len(TEXT))
SEARCH_RESULT = {
    "type": "web_search_result_location",
    "cited_text": "Paris hosted the 2024 Games.",
    "url": "https://olympics.example/paris",
    "title": "Paris",
    "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0",
}
ANTHROPIC_OWN = Citation(
    url="https://olympics.example/paris",
    title="Paris",
    start=0,
    end=len(TEXT),
    extra={"anthropic": {"citation": SEARCH_RESULT}},
)


def _history(*cited: Citation, item_id: str | None = None) -> Request:
    answer = TextPart(text=TEXT, citations=cited, item_id=item_id)
    return Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="Where were the Games?"),)),
            Message(role="assistant", parts=(answer,)),
            Message(role="user", parts=(TextPart(text="And the next ones?"),)),
        ),
    )


def _sent(dialect: str, request: Request) -> tuple[list[str | None], list[TranslationWarning]]:
    """The URLs of the citations the target's wire carries, and the citation warnings."""
    codec = wire_codec(dialect)  # type: ignore[arg-type]  # a DialectName from the table below
    encoded = codec.encode_request(request, ReplayPolicy())
    decoded = codec.decode_request(encoded.payload)
    urls = [
        citation.url
        for message in decoded.messages
        for part in message.parts
        if isinstance(part, TextPart)
        for citation in part.citations
    ]
    dropped = [w for w in encoded.warnings if w.code == "citation_dropped"]
    return urls, dropped


@pytest.mark.parametrize("dialect", ["openai-chat", "gemini"])
def test_chat_and_gemini_histories_drop_every_citation_with_a_warning(dialect: str) -> None:
    urls, dropped = _sent(dialect, _history(WEB, DOCUMENT, ANTHROPIC_OWN, item_id="msg_1"))
    assert urls == []
    assert dropped, "a dropped citation is always said"


def test_a_responses_history_keeps_url_citations_of_a_message_with_its_id() -> None:
    urls, dropped = _sent("openai-responses", _history(WEB, DOCUMENT, item_id="msg_1"))
    assert urls == [WEB.url]
    assert len(dropped) == 1 and "document" in dropped[0].message


def test_a_responses_history_drops_the_citations_of_an_id_less_message() -> None:
    urls, dropped = _sent("openai-responses", _history(WEB))
    assert urls == []
    assert len(dropped) == 1


def test_an_anthropic_history_keeps_only_anthropics_own_citations() -> None:
    urls, dropped = _sent("anthropic", _history(ANTHROPIC_OWN, WEB, DOCUMENT))
    assert urls == [ANTHROPIC_OWN.url]
    assert len(dropped) == 1 and "2 citation(s)" in dropped[0].message


@pytest.mark.parametrize("dialect", ["openai-chat", "gemini", "openai-responses", "anthropic"])
def test_a_history_without_citations_has_no_citation_warning(dialect: str) -> None:
    assert _sent(dialect, _history(item_id="msg_1")) == ([], [])

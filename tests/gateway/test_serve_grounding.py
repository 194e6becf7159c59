"""Gemini grounding through a real ``interlock serve`` with the official SDKs (issue 11).

The emulated model cites a web page for part of an answer whose text holds non-ASCII
characters before the cited span, so Gemini's UTF-8 byte offsets and OpenAI's character
offsets differ. The Gemini emulator sends the citation as ``groundingMetadata`` (its codec's
encoding), the OpenAI emulators as annotations. An ``openai`` client in front of the Gemini
upstream must get the citation at the right *character* offsets; a ``google-genai`` client in
front of the OpenAI upstreams must get a grounding support whose *byte* offsets slice the
cited words out of the answer's text; streaming and not. The Anthropic emulator cites a web
search result for its whole text block (``web_search_result_location`` with an
``encrypted_index``) and a document of the request (``char_location``) for its whole text
block: an ``anthropic`` client gets both back exactly, the other clients the web one as a
citation of the whole text, and a translation header naming the dropped document citation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from interlock.emulators._brain import DefaultBrain
from interlock.transcript import Citation, JsonObject, Request, Response, TextPart
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

QUESTION = "Grüße aus Zürich 🇨🇭: where are the 2024 Olympics?"
CITED_WORDS = "2024 Olympics"
SOURCE = "https://olympics.example/paris-2024"
TITLE = "Paris 2024"


class GroundedBrain(DefaultBrain):
    """The default answers; an answer's text cites one web page for the words
    ``CITED_WORDS`` when it holds them."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        parts = tuple(
            _cite(part) if isinstance(part, TextPart) else part for part in response.message.parts
        )
        return replace(response, message=replace(response.message, parts=parts))


SEARCH_RESULT: JsonObject = {
    "type": "web_search_result_location",
    "cited_text": "The 2024 Summer Olympics were held in Paris.",
    "url": SOURCE,
    "title": TITLE,
    "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0",
}


DOCUMENT: JsonObject = {
    "type": "char_location",
    "cited_text": "Paris hosted the 2024 Games.",
    "document_index": 0,
    "document_title": "Games report",
    "start_char_index": 10,
    "end_char_index": 38,
}


class SearchingBrain(DefaultBrain):
    """The default answers; Anthropic's answer text cites a web search result and a document
    of the request, both for the whole text block."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        web = Citation(url=SOURCE, title=TITLE, extra={"anthropic": {"citation": SEARCH_RESULT}})
        document = Citation(
            url=None, title="Games report", extra={"anthropic": {"citation": DOCUMENT}}
        )
        parts = tuple(
            replace(part, citations=(web, document)) if isinstance(part, TextPart) else part
            for part in response.message.parts
        )
        return replace(response, message=replace(response.message, parts=parts))


def _cite(part: TextPart) -> TextPart:
    start = part.text.find(CITED_WORDS)
    if start < 0:
        return part
    citation = Citation(url=SOURCE, title=TITLE, start=start, end=start + len(CITED_WORDS))
    return replace(part, citations=(citation,))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-grounding")
    with emulators_on_loopback() as (emulator_url, emulators):
        _ground(emulators)
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _ground(emulators: dict[str, Emulator]) -> None:
    for name, prefix in (
        ("gemini", "call_gemini"),
        ("openai-chat", "call_chat"),
        ("openai-responses", "call_resp"),
    ):
        emulators[name].brain = GroundedBrain(call_prefix=prefix)  # type: ignore[union-attr]
    emulators["anthropic"].brain = SearchingBrain(call_prefix="call_anthropic")  # type: ignore[union-attr]


def _chat(
    client: OpenAI, stream: bool, model: str = "via-gemini"
) -> tuple[str, list[dict[str, Any]]]:
    messages: Any = [{"role": "user", "content": QUESTION}]
    if not stream:
        message = client.chat.completions.create(model=model, messages=messages)
        annotations = message.choices[0].message.annotations or []
        text = message.choices[0].message.content or ""
        return text, [annotation.model_dump()["url_citation"] for annotation in annotations]
    text: list[str] = []
    cited: list[dict[str, Any]] = []
    for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text.append(delta.content or "")
        cited += [a["url_citation"] for a in (delta.model_extra or {}).get("annotations") or []]
    return "".join(text), cited


def _responses(
    client: OpenAI, stream: bool, model: str = "via-gemini"
) -> tuple[str, list[dict[str, Any]]]:
    if not stream:
        output = client.responses.create(model=model, input=QUESTION).output
    else:
        events = list(client.responses.create(model=model, input=QUESTION, stream=True))
        output = next(e for e in events if e.type == "response.completed").response.output
    texts = [
        part.model_dump()
        for item in output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    ]
    cited = [
        {key: value for key, value in annotation.items() if key != "type"}
        for part in texts
        for annotation in part["annotations"]
    ]
    return "".join(part["text"] for part in texts), cited


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("client_dialect", ["chat", "responses"])
def test_gemini_grounding_reaches_openai_clients_at_character_offsets(
    url: str, client_dialect: str, stream: bool
) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        text, cited = (_chat if client_dialect == "chat" else _responses)(client, stream)
    assert text == f"You said: {QUESTION}"
    (citation,) = cited
    assert (citation["url"], citation["title"]) == (SOURCE, TITLE)
    assert text[citation["start_index"] : citation["end_index"]] == CITED_WORDS
    assert text.encode().find(CITED_WORDS.encode()) != citation["start_index"], (
        "the test must tell bytes from characters"
    )


def _grounded(model: str, url: str, stream: bool) -> tuple[str, types.GroundingMetadata | None]:
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    if not stream:
        answer = client.models.generate_content(model=model, contents=QUESTION)
        candidate = (answer.candidates or [None])[0]
        assert candidate is not None and candidate.content is not None
        text = "".join(p.text or "" for p in candidate.content.parts or [] if not p.thought)
        return text, candidate.grounding_metadata
    pieces: list[str] = []
    grounding: types.GroundingMetadata | None = None
    for chunk in client.models.generate_content_stream(model=model, contents=QUESTION):
        for candidate in chunk.candidates or []:
            parts = candidate.content.parts or [] if candidate.content else []
            pieces += [p.text or "" for p in parts if not p.thought]
            grounding = candidate.grounding_metadata or grounding
    return "".join(pieces), grounding


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", ["via-chat", "via-responses"])
def test_openai_citations_reach_a_gemini_client_as_grounding_in_bytes(
    url: str, model: str, stream: bool
) -> None:
    text, grounding = _grounded(model, url, stream)
    assert text == f"You said: {QUESTION}"
    assert grounding is not None
    (chunk,) = grounding.grounding_chunks or []
    assert chunk.web is not None and (chunk.web.uri, chunk.web.title) == (SOURCE, TITLE)
    (support,) = grounding.grounding_supports or []
    segment = support.segment
    assert segment is not None and support.grounding_chunk_indices == [0]
    start, end = segment.start_index or 0, segment.end_index
    assert end is not None and text.encode()[start:end].decode() == CITED_WORDS
    assert segment.text == CITED_WORDS
    assert text.find(CITED_WORDS) != start, "the test must tell bytes from characters"


def test_a_grounded_gemini_answer_reaches_a_gemini_client_unchanged(url: str) -> None:
    text, grounding = _grounded("via-gemini", url, stream=False)
    assert grounding is not None and grounding.grounding_supports
    segment = grounding.grounding_supports[0].segment
    assert segment is not None and segment.end_index is not None
    assert text.encode()[segment.start_index or 0 : segment.end_index].decode() == CITED_WORDS


def _claude(client: anthropic.Anthropic, model: str, stream: bool) -> list[dict[str, Any]]:
    messages: Any = [{"role": "user", "content": QUESTION}]
    if not stream:
        answer = client.messages.create(model=model, max_tokens=256, messages=messages)
        return [block.model_dump(exclude_none=True) for block in answer.content]
    with client.messages.stream(model=model, max_tokens=256, messages=messages) as events:
        answer = events.get_final_message()
    return [block.model_dump(exclude_none=True) for block in answer.content]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_an_anthropic_search_citation_reaches_an_anthropic_client_exactly(
    url: str, stream: bool
) -> None:
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        blocks = _claude(client, "via-anthropic", stream)
    texts = [block for block in blocks if block["type"] == "text"]
    assert [block["citations"] for block in texts] == [[SEARCH_RESULT, DOCUMENT]]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("client_dialect", ["chat", "responses", "gemini"])
def test_an_anthropic_search_citation_cites_the_whole_text_for_other_clients(
    url: str, client_dialect: str, stream: bool
) -> None:
    if client_dialect == "gemini":
        text, grounding = _grounded("via-anthropic", url, stream)
        assert grounding is not None and grounding.grounding_supports
        (support,) = grounding.grounding_supports
        assert support.segment is not None and support.segment.text == text
        assert (support.segment.start_index or 0, support.segment.end_index) == (
            0,
            len(text.encode()),
        )
        return
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        ask = _chat if client_dialect == "chat" else _responses
        text, cited = ask(client, stream, model="via-anthropic")
    assert cited == [{"url": SOURCE, "title": TITLE, "start_index": 0, "end_index": len(text)}]


def test_another_providers_citation_is_not_sent_to_an_anthropic_client_and_is_warned(
    url: str,
) -> None:
    """Anthropic cites only its own search results: a Chat upstream's citation has no
    ``encrypted_index`` to give, so the Anthropic client gets the text without it, and the
    translation header (and the answer's ``interlock`` field) say so."""
    messages: Any = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        raw = client.messages.with_raw_response.create(
            model="via-chat", max_tokens=256, messages=messages
        )
    blocks = [block.model_dump(exclude_none=True) for block in raw.parse().content]
    assert [block.get("citations") for block in blocks if block["type"] == "text"] == [None]
    label = raw.headers["x-interlock-translation"]
    # the emulated Chat model's unsigned reasoning_content has no Anthropic form either
    expected = "degraded; citation_dropped at message, reasoning_dropped at message"
    assert label == expected, label
    warnings = raw.http_response.json()["interlock"]["warnings"]
    assert [(w["code"], w["location"]) for w in warnings] == [
        ("citation_dropped", "message"),
        ("reasoning_dropped", "message"),
    ]


def test_a_document_citation_dropped_for_an_openai_client_is_warned(url: str) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        raw = client.chat.completions.with_raw_response.create(
            model="via-anthropic", messages=[{"role": "user", "content": QUESTION}]
        )
    annotations = raw.parse().choices[0].message.annotations or []
    assert [annotation.url_citation.url for annotation in annotations] == [SOURCE]
    assert raw.headers["x-interlock-translation"] == "degraded; citation_dropped at message"


def test_an_answer_that_keeps_its_citations_is_not_labelled_degraded(url: str) -> None:
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        raw = client.messages.with_raw_response.create(
            model="via-anthropic",
            max_tokens=256,
            messages=[{"role": "user", "content": QUESTION}],
        )
    assert "degraded" not in raw.headers["x-interlock-translation"]

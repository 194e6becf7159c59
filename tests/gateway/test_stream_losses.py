"""A streamed answer is checked for losses as its fold, encoded whole: that is honest only
while every client dialect's stream encoder carries what its ``encode_response`` carries.

For every cited answer of the conformance vectors, and the citation shapes each provider
sends (URL citations at offsets, a whole-block search result, a request document), in every
client dialect: the stream the client receives, decoded back by that dialect's own stream
decoder and folded, holds exactly the citations the non-streamed answer holds decoded back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.gateway.answer_losses import answer_losses, citations
from interlock.gateway.dialects import Dialect, ingress_dialects
from interlock.transcript import (
    Citation,
    Message,
    Response,
    TextPart,
    fold_updates,
    load_response,
    response_to_updates,
)

VECTORS = Path(__file__).parents[2] / "conformance" / "vectors"
INGRESS: dict[str, Dialect] = {**ingress_dialects()}


def _vector_answers() -> dict[str, Response]:
    answers: dict[str, Response] = {}
    for path in sorted(VECTORS.glob("*/response_*.json")):
        response = load_response(json.loads(path.read_text())["canonical"])
        if citations(response):
            answers[f"{path.parent.name}/{path.stem}"] = response
    return answers


TEXT = "Grüße 🇨🇭: the 2024 Games were in Paris."
WEB = Citation(url="https://olympics.example/paris", title="Paris", start=13, end=23)
WHOLE = Citation(
    url="https://olympics.example/all",
    title="All",
    start=0,
    end=len(TEXT),
    extra={"anthropic": {"citation": {"type": "web_search_result_location", "url": "x"}}},
)
DOCUMENT = Citation(url=None, title="Report", start=0, end=len(TEXT))


def _answer(*cited: Citation) -> Response:
    part = TextPart(text=TEXT, citations=cited)
    return Response(message=Message(role="assistant", parts=(part,)), finish_reason="stop")


ANSWERS = {
    **_vector_answers(),
    "web": _answer(WEB),
    "whole": _answer(WHOLE),
    "web+document": _answer(WEB, DOCUMENT),
}


def test_the_vectors_hold_cited_answers_of_several_dialects() -> None:
    dialects = {name.split("/")[0] for name in ANSWERS if "/" in name}
    assert len(dialects) >= 3, dialects


@pytest.mark.parametrize("dialect", sorted(INGRESS))
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_streamed_answer_keeps_the_citations_a_whole_one_keeps(name: str, dialect: str) -> None:
    ingress, response = INGRESS[dialect], ANSWERS[name]
    encoder = ingress.stream_encoder()
    events = [event for update in response_to_updates(response) for event in encoder.encode(update)]
    events += encoder.finish()
    decoder = ingress.stream_decoder()
    updates = [update for event in events for update in decoder.feed(event)] + decoder.finish()
    streamed = citations(fold_updates(updates))
    whole = citations(ingress.decode_response(ingress.encode_response(response)))
    assert streamed == whole
    lost = answer_losses(ingress, response)
    assert bool(lost) == (whole < citations(response))

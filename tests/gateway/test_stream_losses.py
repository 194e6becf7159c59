"""A streamed answer is checked for losses as its fold, encoded whole: that is honest only
while every client dialect's stream encoder carries what its ``encode_response`` carries.

For every answer of the conformance vectors, and the citation shapes each provider sends
(URL citations at offsets, a whole-block search result, a request document), in every client
dialect: the stream the client receives, decoded back by that dialect's own stream decoder
and folded, holds exactly what the non-streamed answer holds decoded back, of each kind
:func:`~interlock.gateway.answer_losses.answer_losses` checks (citations, hosted tool parts,
approval requests, reasoning with text, refusals).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.gateway.answer_losses import answer_losses, inventory
from interlock.gateway.dialects import Dialect, ingress_dialects
from interlock.transcript import (
    Alternative,
    Citation,
    Message,
    Response,
    TextPart,
    TokenLogprob,
    fold_updates,
    load_request,
    load_response,
    response_to_updates,
)

VECTORS = Path(__file__).parents[2] / "conformance" / "vectors"
INGRESS: dict[str, Dialect] = {**ingress_dialects()}


def _vector_answers() -> dict[str, Response]:
    answers: dict[str, Response] = {}
    for path in sorted(VECTORS.glob("*/response_*.json")):
        response = load_response(json.loads(path.read_text())["canonical"])
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


def _mcp_approval() -> Response:
    """The assistant turn of the MCP approval vector (a hosted tool listing and an approval
    request) as an answer."""
    path = VECTORS / "openai_responses" / "request_mcp_approval.json"
    request = load_request(json.loads(path.read_text())["canonical"])
    return Response(message=request.messages[1], finish_reason="stop")


ANSWERS = {
    **_vector_answers(),
    "mcp_approval": _mcp_approval(),
    "web": _answer(WEB),
    "whole": _answer(WHOLE),
    "web+document": _answer(WEB, DOCUMENT),
}


def test_the_answers_hold_every_kind_some_client_dialect_loses() -> None:
    lost = {
        warning.code
        for response in ANSWERS.values()
        for ingress in INGRESS.values()
        for warning in answer_losses(ingress, response)
    }
    assert lost >= {
        "citation_dropped",
        "hosted_tool_dropped",
        "reasoning_dropped",
        "refusal_as_text",
    }


@pytest.mark.parametrize("dialect", sorted(INGRESS))
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_streamed_answer_keeps_the_citations_a_whole_one_keeps(name: str, dialect: str) -> None:
    ingress, response = INGRESS[dialect], ANSWERS[name]
    encoder = ingress.stream_encoder()
    events = [event for update in response_to_updates(response) for event in encoder.encode(update)]
    events += encoder.finish()
    decoder = ingress.stream_decoder()
    updates = [update for event in events for update in decoder.feed(event)] + decoder.finish()
    streamed = inventory(fold_updates(updates))
    whole = inventory(ingress.decode_response(ingress.encode_response(response)))
    assert streamed == whole
    lost = {warning.code for warning in answer_losses(ingress, response)}
    sent = inventory(response)
    assert len(lost) == sum(1 for kind, count in sent.items() if whole.get(kind, 0) < count)


@pytest.mark.parametrize(
    ("name", "dialect", "code"),
    [
        ("openai_responses/response_url_citation", "anthropic", "citation_dropped"),
        ("anthropic/response_web_search_citations", "openai-chat", "hosted_tool_dropped"),
        ("anthropic/response_web_search_citations", "gemini", "hosted_tool_dropped"),
        ("mcp_approval", "openai-chat", "hosted_approval_dropped"),
        ("gemini/response_grounding", "openai-chat", "reasoning_dropped"),
        (
            "openai_responses/response_function_call_with_reasoning",
            "anthropic",
            "reasoning_dropped",
        ),
        ("openai_chat/response_refusal", "gemini", "refusal_as_text"),
        ("openai_chat/response_refusal", "anthropic", "refusal_as_text"),
    ],
)
def test_what_a_client_dialect_has_no_answer_form_for_is_named(
    name: str, dialect: str, code: str
) -> None:
    codes = [warning.code for warning in answer_losses(INGRESS[dialect], ANSWERS[name])]
    assert code in codes


@pytest.mark.parametrize("name", ["openai_chat/response_refusal", "gemini/response_grounding"])
def test_a_client_of_the_answers_own_dialect_loses_nothing(name: str) -> None:
    own = {"openai_chat": "openai-chat", "gemini": "gemini"}[name.split("/")[0]]
    assert answer_losses(INGRESS[own], ANSWERS[name]) == ()


_TOKENS = (TokenLogprob(token="Hi", logprob=-0.1),)
_SEVERAL = Response(
    message=Message(role="assistant", parts=(TextPart(text="Hi", logprobs=_TOKENS),)),
    finish_reason="stop",
    alternatives=(Alternative(message=Message(role="assistant", parts=(TextPart(text="Yo"),))),),
)


@pytest.mark.parametrize(
    ("dialect", "codes"),
    [
        ("anthropic", ["logprobs_dropped", "candidates_dropped"]),
        ("openai-responses", ["candidates_dropped"]),
        ("openai-chat", []),
        ("gemini", []),
    ],
)
def test_candidates_and_tokens_a_client_dialect_cannot_show_are_named(
    dialect: str, codes: list[str]
) -> None:
    said = [w.code for w in answer_losses(INGRESS[dialect], _SEVERAL)]
    assert said == codes
    streamed = fold_updates(response_to_updates(_SEVERAL))
    assert [w.code for w in answer_losses(INGRESS[dialect], streamed)] == codes

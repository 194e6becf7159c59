"""Mistral's ``thinking`` content part: raw reasoning, back exactly, streamed both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import (
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from interlock.codecs.openai_responses import encode_response as encode_responses_response
from interlock.transcript import (
    DecodeError,
    ReasoningPart,
    ReplayPolicy,
    TextPart,
    Update,
    fold_updates,
    response_to_updates,
)

CORPUS = Path(__file__).resolve().parents[3] / "conformance" / "corpus" / "payloads"
RECORDED = CORPUS / "mistral" / "simonw+llm-mistral__reasoning__magistral-high-completion.json"


def recorded() -> dict[str, Any]:
    """A real Magistral answer (llm-mistral's fixture): thinking, then the text."""
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    wire: dict[str, Any] = document["payloads"][0]["wire"]
    return wire


def test_a_recorded_thinking_part_decodes_as_raw_reasoning_and_comes_back_exactly() -> None:
    wire = recorded()
    response = decode_response(wire)
    reasoning, text = response.message.parts
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.reasoning_kind == "raw"
    assert reasoning.text.startswith("I need to calculate 17 multiplied by 19.")
    assert text == TextPart(text="323")
    assert encode_response(response) == wire


def _answer(thinking: list[Any], **more: Any) -> dict[str, Any]:
    part = {"type": "thinking", "thinking": thinking, **more}
    message = {"role": "assistant", "content": [part, {"type": "text", "text": "ok"}]}
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "magistral-medium-latest",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


@pytest.mark.parametrize(
    "thinking",
    [
        [{"type": "text", "text": "a"}, {"type": "text", "text": "bc"}],
        [{"type": "text", "text": "a"}, {"type": "reference", "reference_ids": [1]}],
        [],
    ],
)
def test_chunk_boundaries_and_reference_chunks_survive_the_round_trip(
    thinking: list[Any],
) -> None:
    wire = _answer(thinking, closed=False)
    response = decode_response(wire)
    reasoning = response.message.parts[0]
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.text == "".join(c.get("text", "") for c in thinking)
    assert encode_response(response) == wire


def test_a_thinking_part_without_its_chunks_is_a_decode_error() -> None:
    wire = _answer([])
    del wire["choices"][0]["message"]["content"][0]["thinking"]
    with pytest.raises(DecodeError, match=r"content\[0\]\.thinking"):
        decode_response(wire)


def test_thinking_is_not_allowed_in_a_user_message() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "thinking", "thinking": []}]}],
    }
    with pytest.raises(DecodeError, match="'thinking' is not allowed here"):
        decode_request(body)


def test_in_history_it_goes_back_to_mistral_and_is_raw_reasoning_elsewhere() -> None:
    assistant = recorded()["choices"][0]["message"]
    body = {"model": "m", "messages": [{"role": "user", "content": "17*19?"}, assistant]}
    request = decode_request(body)
    same = encode_request(request, policy=ReplayPolicy(), reasoning_dialect=None)
    assert same.payload["messages"][1]["content"] == assistant["content"]
    assert same.warnings == ()
    deepseek = encode_request(request, policy=ReplayPolicy(), reasoning_dialect="reasoning_content")
    sent = deepseek.payload["messages"][1]
    assert sent["reasoning_content"].startswith("I need to calculate")
    assert sent["content"] == [{"type": "text", "text": "323"}]
    openai = encode_request(request, policy=ReplayPolicy(mode="degrade"), reasoning_dialect="none")
    assert [w.code for w in openai.warnings] == ["reasoning_dropped"]
    assert openai.warnings[0].location == "messages[1].parts[0]"


def test_a_responses_client_gets_it_as_reasoning() -> None:
    wire = encode_responses_response(decode_response(recorded()))
    kinds = [item["type"] for item in wire["output"]]
    assert kinds == ["reasoning", "message"]
    assert wire["output"][0]["content"][0]["text"].startswith("I need to calculate")


def _stream(*deltas: dict[str, Any]) -> list[SseEvent]:
    head = {"id": "s", "object": "chat.completion.chunk", "created": 1, "model": "magistral"}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [SseEvent(data=json.dumps(chunk)) for chunk in chunks] + [SseEvent(data="[DONE]")]


def _decode(events: list[SseEvent]) -> list[Update]:
    decoder = StreamDecoder()
    updates: list[Update] = []
    for event in events:
        updates += decoder.feed(event)
    return updates + decoder.finish()


def _thinking(text: str) -> dict[str, Any]:
    return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}


def test_streamed_thinking_folds_to_the_same_parts_as_the_answer() -> None:
    events = _stream(
        {"role": "assistant", "content": ""},
        _thinking("Let me "),
        _thinking("think."),
        {"content": [{"type": "text", "text": "4"}]},
        {"content": "2"},
    )
    folded = fold_updates(_decode(events))
    assert folded.message.parts[0] == ReasoningPart(
        reasoning_kind="raw", text="Let me think.", extra=folded.message.parts[0].extra
    )
    assert folded.message.parts[1] == TextPart(text="42")


def test_an_unknown_streamed_content_part_is_a_decode_error() -> None:
    events = _stream({"content": [{"type": "image_url", "image_url": {"url": "x"}}]})
    with pytest.raises(DecodeError, match=r"content\[0\]\.type"):
        _decode(events)


def test_the_stream_encoder_writes_thinking_back_as_mistral_streams_it() -> None:
    response = decode_response(recorded())
    encoder = StreamEncoder()
    events: list[SseEvent] = []
    for update in response_to_updates(response):
        events += encoder.encode(update)
    events += encoder.finish()
    deltas = [json.loads(e.data)["choices"][0]["delta"] for e in events[:-1]]
    assert deltas[1]["content"][0]["type"] == "thinking"
    folded = fold_updates(_decode(events))
    reasoning, text = folded.message.parts
    assert isinstance(reasoning, ReasoningPart)
    assert (
        reasoning.text == recorded()["choices"][0]["message"]["content"][0]["thinking"][0]["text"]
    )
    assert text == TextPart(text="323")


def test_a_re_streamed_thinking_part_keeps_closed_and_folds_back_to_the_answer() -> None:
    """The recorded answer's ``"closed": true`` goes out on a last piece of the streamed
    thinking part (an empty ``thinking`` list), so the client's fold is the whole answer."""
    response = decode_response(recorded())
    encoder = StreamEncoder()
    events: list[SseEvent] = []
    for update in response_to_updates(response):
        events += encoder.encode(update)
    events += encoder.finish()
    pieces = [
        item
        for event in events[:-1]
        for item in json.loads(event.data)["choices"][0]["delta"].get("content") or []
        if isinstance(item, dict) and item["type"] == "thinking"
    ]
    assert pieces[-1] == {"type": "thinking", "thinking": [], "closed": True}
    assert all("closed" not in piece for piece in pieces[:-1])
    folded = fold_updates(_decode(events))
    message = encode_response(folded)["choices"][0]["message"]
    assert message["content"] == recorded()["choices"][0]["message"]["content"]

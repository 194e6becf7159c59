"""Gemini 3 server-side tool parts (``toolCall`` / ``toolResponse``): the service ran the tool.

They are hosted tool items, never reasoning (they often carry a ``thoughtSignature``, and were
once taken for a signature-only reasoning part). Gemini gets them back exactly where they
were, request, response and stream alike; another dialect refuses them (strict) or drops them
with a warning (degrade), never silently.
"""

from __future__ import annotations

import json
from typing import cast

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.codecs._sse import SseEvent
from interlock.transcript import (
    HostedToolPart,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    ReplayPolicy,
    TextPart,
    fold_updates,
)

TOOL_CALL: JsonObject = {
    "toolCall": {
        "id": "srv_1",
        "toolType": "GOOGLE_SEARCH_WEB",
        "args": {"queries": ["weather in Paris"]},
    },
    "thoughtSignature": "c2VydmVyLXNpZGU=",
}
TOOL_RESPONSE: JsonObject = {
    "toolResponse": {
        "id": "srv_1",
        "toolType": "GOOGLE_SEARCH_WEB",
        "response": {"search_results": [{"title": "Paris", "snippet": "sunny"}]},
    }
}
ANSWER: JsonObject = {"text": "It is sunny in Paris.", "thoughtSignature": "YW5zd2Vy"}


def _request() -> JsonObject:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "weather in Paris?"}]},
            {"role": "model", "parts": [TOOL_CALL, TOOL_RESPONSE, ANSWER]},
            {"role": "user", "parts": [{"text": "and tomorrow?"}]},
        ],
        "tools": [{"googleSearch": {}}],
        "toolConfig": {"includeServerSideToolInvocations": True},
    }


def _response() -> JsonObject:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [TOOL_CALL, TOOL_RESPONSE, ANSWER]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12},
        "modelVersion": "gemini-3-flash-preview",
        "responseId": "r1",
    }


def test_server_side_tool_parts_are_hosted_items_not_reasoning() -> None:
    request = gemini.decode_request(_request(), model="gemini-3-flash-preview")
    parts = request.messages[1].parts
    assert [part.kind for part in parts] == ["hosted_tool", "hosted_tool", "text"]
    call, result = cast(HostedToolPart, parts[0]), cast(HostedToolPart, parts[1])
    assert (call.provider, call.item_type, call.item) == ("google", "toolCall", TOOL_CALL)
    assert (result.item_type, result.item) == ("toolResponse", TOOL_RESPONSE)
    assert isinstance(parts[2], TextPart) and parts[2].signature is not None


def test_server_side_tool_parts_are_replayed_exactly() -> None:
    request = gemini.decode_request(_request(), model="gemini-3-flash-preview")
    encoded = gemini.encode_request(request)
    assert encoded.payload == _request() and encoded.warnings == ()
    assert gemini.encode_response(gemini.decode_response(_response())) == _response()


def test_snake_case_server_side_tool_parts_come_back_in_camel_case() -> None:
    snaked: JsonObject = {
        "tool_call": {"id": "srv_1", "tool_type": "URL_CONTEXT", "args": {"url_list": ["x"]}},
        "thought_signature": "c2ln",
    }
    request = gemini.decode_request(
        {
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [snaked]},
            ]
        }
    )
    part = request.messages[1].parts[0]
    assert isinstance(part, HostedToolPart) and part.item_type == "toolCall"
    contents = cast(list[JsonObject], gemini.encode_request(request).payload["contents"])
    # Field names are camelCased at every level; the tool's own data (args) is not.
    assert contents[1]["parts"] == [
        {
            "toolCall": {"id": "srv_1", "toolType": "URL_CONTEXT", "args": {"url_list": ["x"]}},
            "thoughtSignature": "c2ln",
        }
    ]


def _stream_events() -> list[SseEvent]:
    chunks: list[JsonValue] = []
    for part in (TOOL_CALL, TOOL_RESPONSE, ANSWER):
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}]})
    chunks.append({**_response(), "candidates": [{"finishReason": "STOP", "index": 0}]})
    return [SseEvent(data=json.dumps(chunk)) for chunk in chunks]


def test_streamed_server_side_tool_parts_fold_like_the_response_and_re_stream() -> None:
    decoder = gemini.StreamDecoder()
    updates = [update for event in _stream_events() for update in decoder.feed(event)]
    folded = fold_updates([*updates, *decoder.finish()])
    whole = gemini.decode_response(_response())
    assert folded.message.parts == whole.message.parts
    encoder = gemini.StreamEncoder()
    events = [event for update in updates for event in encoder.encode(update)]
    again = gemini.StreamDecoder()
    refolded = fold_updates(
        [update for event in events for update in again.feed(event)] + again.finish()
    )
    assert refolded.message.parts == whole.message.parts
    sent = [
        json.loads(event.data)["candidates"][0].get("content", {}).get("parts") for event in events
    ]
    assert [TOOL_CALL] in sent and [TOOL_RESPONSE] in sent


ENCODERS = {
    "openai_chat": openai_chat.encode_request,
    "openai_responses": openai_responses.encode_request,
    "anthropic": anthropic.encode_request,
}


@pytest.mark.parametrize("target", sorted(ENCODERS))
def test_other_dialects_refuse_or_drop_them_with_a_warning(target: str) -> None:
    request = gemini.decode_request(_request(), model="gemini-3-flash-preview")
    encode = ENCODERS[target]
    with pytest.raises(LossyHistoryError):
        encode(request)
    encoded = encode(request, policy=ReplayPolicy(mode="degrade"))
    warned = {warning.location for warning in encoded.warnings}
    assert {"messages[1].parts[0]", "messages[1].parts[1]"} <= warned
    assert "srv_1" not in json.dumps(encoded.payload)

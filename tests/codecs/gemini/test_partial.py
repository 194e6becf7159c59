"""Vertex streamed function-call arguments (``partialArgs`` / ``willContinue``) assembled.

The fragments follow the shape of the google-genai SDK's own streaming-arguments tests: a
named first fragment with ``willContinue: true``, nameless ``partialArgs`` fragments, the
last one without ``willContinue``, then an empty ``functionCall: {}``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.codecs import gemini, openai_chat
from interlock.codecs._sse import SseEvent
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    PartFinished,
    PartStarted,
    ReplayPolicy,
    ToolCallPart,
    Update,
    fold_updates,
)


def _chunk(*parts: JsonValue, finish: bool = False) -> JsonObject:
    candidate: JsonObject = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "responseId": "v1", "modelVersion": "gemini-3-pro"}


def _call(body: JsonObject, **part: JsonValue) -> JsonObject:
    return {"functionCall": body, **part}


FRAGMENTS: list[JsonObject] = [
    _chunk(
        _call({"id": "fc_1", "name": "plan_trip", "willContinue": True}, thoughtSignature="c2ln")
    ),
    _chunk(
        _call(
            {
                "partialArgs": [
                    {"jsonPath": "$.city", "stringValue": "San ", "willContinue": True}
                ],
                "willContinue": True,
            }
        )
    ),
    _chunk(
        _call(
            {
                "partialArgs": [
                    {"jsonPath": "$.city", "stringValue": "Francisco"},
                    {"jsonPath": "$.days", "numberValue": 3},
                    {"jsonPath": "$.stops[1].name", "stringValue": "Muir Woods"},
                    {"jsonPath": "$.budget", "nullValue": "NULL_VALUE"},
                ],
                "willContinue": True,
            }
        )
    ),
    _chunk(
        _call({"partialArgs": [{"jsonPath": "$.car", "willContinue": True}], "willContinue": True})
    ),
    _chunk(_call({"partialArgs": [{"jsonPath": "$.car", "boolValue": False}]})),
    _chunk(_call({})),
    {**_chunk(finish=True), "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3}},
]
ARGUMENTS = {
    "city": "San Francisco",
    "days": 3,
    "stops": [None, {"name": "Muir Woods"}],
    "budget": None,
    "car": False,
}


def _decode(chunks: list[JsonObject]) -> list[Update]:
    decoder = gemini.StreamDecoder()
    updates = [
        update for chunk in chunks for update in decoder.feed(SseEvent(data=json.dumps(chunk)))
    ]
    return updates + decoder.finish()


def test_streamed_arguments_become_one_whole_call() -> None:
    updates = _decode(FRAGMENTS)
    started = [update for update in updates if isinstance(update, PartStarted)]
    finished = [update for update in updates if isinstance(update, PartFinished)]
    assert len(started) == len(finished) == 1
    assert isinstance(started[0].part, ToolCallPart) and started[0].part.arguments == ""
    call = finished[0].part
    assert isinstance(call, ToolCallPart)
    assert (call.call_id, call.name) == ("fc_1", "plan_trip")
    assert json.loads(call.arguments) == ARGUMENTS
    assert call.signature is not None and call.signature.data == "c2ln"
    folded = fold_updates(updates)
    assert folded.finish_reason == "tool_calls" and folded.message.parts == (call,)


def test_the_assembled_call_is_the_call_a_whole_response_would_hold() -> None:
    whole = _chunk(
        _call({"id": "fc_1", "name": "plan_trip", "args": ARGUMENTS}, thoughtSignature="c2ln"),
        finish=True,
    )
    streamed = fold_updates(_decode(FRAGMENTS)).message.parts
    assert streamed == gemini.decode_response(whole).message.parts


def test_snake_case_fragments_and_a_minted_id() -> None:
    chunks: list[JsonObject] = [
        _chunk({"function_call": {"name": "f", "will_continue": True}}),
        _chunk(
            {
                "function_call": {
                    "partial_args": [{"json_path": "$['a b']", "string_value": "x"}],
                    "will_continue": False,
                }
            }
        ),
        _chunk(finish=True),
    ]
    (call,) = fold_updates(_decode(chunks)).message.parts
    assert isinstance(call, ToolCallPart)
    assert json.loads(call.arguments) == {"a b": "x"} and call.call_id == "gcall_v1_0"
    # Re-encoded for a Gemini client: a whole call, its minted id left out again.
    assert gemini.encode_response(fold_updates(_decode(chunks)))["candidates"][0]["content"][
        "parts"
    ] == [{"functionCall": {"name": "f", "args": {"a b": "x"}}}]


def test_a_text_part_after_an_unclosed_call_ends_it() -> None:
    chunks = [
        _chunk(_call({"name": "f", "willContinue": True})),
        _chunk(
            _call({"partialArgs": [{"jsonPath": "$.q", "stringValue": "x"}], "willContinue": True})
        ),
        _chunk({"text": "done"}, finish=True),
    ]
    parts = fold_updates(_decode(chunks)).message.parts
    assert [part.kind for part in parts] == ["tool_call", "text"]
    assert isinstance(parts[0], ToolCallPart) and json.loads(parts[0].arguments) == {"q": "x"}


def test_two_streamed_calls_in_a_row_stay_two_calls() -> None:
    chunks = [
        _chunk(_call({"name": "f", "willContinue": True})),
        _chunk(_call({"partialArgs": [{"jsonPath": "$.n", "numberValue": 1}]})),
        _chunk(_call({"name": "g", "willContinue": True})),
        _chunk(_call({"partialArgs": [{"jsonPath": "$.n", "numberValue": 2}]})),
        _chunk(_call({}), finish=True),
    ]
    parts = fold_updates(_decode(chunks)).message.parts
    assert [
        (part.name, json.loads(part.arguments)) for part in parts if isinstance(part, ToolCallPart)
    ] == [
        ("f", {"n": 1}),
        ("g", {"n": 2}),
    ]
    assert len({part.call_id for part in parts if isinstance(part, ToolCallPart)}) == 2


@pytest.mark.parametrize(
    "fragment",
    [
        {"partialArgs": [{"jsonPath": "city", "stringValue": "x"}]},
        {"partialArgs": [{"jsonPath": "$.city..x", "stringValue": "x"}]},
        {"partialArgs": [{"jsonPath": "$.city", "stringValue": "x", "numberValue": 1}]},
        {
            "partialArgs": [
                {"jsonPath": "$.city[0]", "stringValue": "x"},
                {"jsonPath": "$.city.x", "boolValue": True},
            ]
        },
    ],
)
def test_malformed_fragments_are_decode_errors(fragment: JsonObject) -> None:
    with pytest.raises(DecodeError):
        _decode([_chunk(_call({"name": "f", "willContinue": True})), _chunk(_call(fragment))])


def test_a_nameless_fragment_with_no_call_to_continue_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        _decode([_chunk(_call({"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]}))])


def test_a_chat_client_gets_the_whole_arguments_streamed() -> None:
    encoder = openai_chat.StreamEncoder()
    events = [event for update in _decode(FRAGMENTS) for event in encoder.encode(update)]
    decoder = openai_chat.StreamDecoder()
    folded = fold_updates(
        [update for event in events for update in decoder.feed(event)] + decoder.finish()
    )
    (call,) = folded.message.parts
    assert isinstance(call, ToolCallPart) and json.loads(call.arguments) == ARGUMENTS


# --- in request history: the fragments a client kept from such a stream --------------------

USER: JsonObject = {"role": "user", "parts": [{"text": "plan a trip"}]}
RESULT: JsonObject = {
    "role": "user",
    "parts": [{"functionResponse": {"id": "fc_1", "name": "plan_trip", "response": {"ok": 1}}}],
}


def _kept_parts() -> list[JsonValue]:
    """The model parts of every streamed chunk, in order (what a client appends)."""
    chunks: Any = FRAGMENTS
    return [
        part
        for chunk in chunks
        if "content" in chunk["candidates"][0]
        for part in chunk["candidates"][0]["content"]["parts"]
    ]


def _history_call(contents: list[JsonValue]) -> tuple[list[str], ToolCallPart]:
    request = gemini.decode_request({"contents": contents}, model="gemini-3-pro")
    roles = [message.role for message in request.messages]
    calls = [call for message in request.messages for call in message.tool_calls]
    assert len(calls) == 1
    return roles, calls[0]


@pytest.mark.parametrize("layout", ["one content", "a content per chunk"])
def test_fragments_kept_in_history_decode_as_one_whole_call(layout: str) -> None:
    parts = _kept_parts()
    model: list[JsonValue] = (
        [{"role": "model", "parts": parts}]
        if layout == "one content"
        else [{"role": "model", "parts": [part]} for part in parts]
    )
    roles, call = _history_call([USER, *model, RESULT])
    assert roles == ["user", "assistant", "tool"]
    assert (call.call_id, call.name) == ("fc_1", "plan_trip")
    assert json.loads(call.arguments) == ARGUMENTS
    assert call.signature is not None and call.signature.data == "c2ln"


def test_history_fragments_translate_to_one_whole_call_for_chat() -> None:
    request = gemini.decode_request(
        {"contents": [USER, {"role": "model", "parts": _kept_parts()}, RESULT]},
        model="gemini-3-pro",
    )
    sent = openai_chat.encode_request(
        request, policy=ReplayPolicy(mode="degrade"), reasoning_dialect="none"
    )
    payload: Any = sent.payload
    (call,) = payload["messages"][1]["tool_calls"]
    assert call["id"] == "fc_1" and json.loads(call["function"]["arguments"]) == ARGUMENTS


def test_text_between_fragments_ends_the_call_and_a_later_fragment_is_refused() -> None:
    opening = _call({"id": "c", "name": "f", "willContinue": True})
    fragment = _call({"partialArgs": [{"jsonPath": "$.a", "numberValue": 1}]})
    with pytest.raises(DecodeError, match=r"contents\[1\]\.parts\[2\]\.functionCall\.name"):
        gemini.decode_request(
            {"contents": [USER, {"role": "model", "parts": [opening, {"text": "x"}, fragment]}]}
        )
    later = {"role": "model", "parts": [fragment]}
    with pytest.raises(DecodeError, match=r"contents\[3\]\.parts\[0\]\.functionCall\.name"):
        gemini.decode_request(
            {"contents": [USER, {"role": "model", "parts": [opening]}, RESULT, later]}
        )

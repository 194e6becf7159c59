"""Responses: golden round trips, SDK parsing, canonical mapping, decode errors."""

from __future__ import annotations

import copy
import json

import pytest
from google.genai import types

from interlock.codecs import gemini
from interlock.codecs._sse import SseEvent
from interlock.transcript import (
    DecodeError,
    JsonObject,
    Message,
    Opaque,
    ReasoningPart,
    RefusalPart,
    Response,
    TextPart,
    ToolCallPart,
    Usage,
    fold_updates,
)
from tests.codecs.gemini.wire_fixtures import fixture_names, load, validate_response

RESPONSES = fixture_names("response_")


@pytest.mark.parametrize("name", RESPONSES)
def test_golden_response_round_trip_is_exact(name: str) -> None:
    payload = load(name)
    original = copy.deepcopy(payload)
    assert gemini.encode_response(gemini.decode_response(payload)) == original
    assert payload == original


@pytest.mark.parametrize("name", RESPONSES)
def test_golden_responses_parse_with_the_sdk(name: str) -> None:
    validate_response(gemini.encode_response(gemini.decode_response(load(name))))


def test_parallel_calls_keep_ids_and_the_signature_on_the_first_call_only() -> None:
    response = gemini.decode_response(load("response_function_calls.json"))
    first, second = response.message.parts
    assert isinstance(first, ToolCallPart) and isinstance(second, ToolCallPart)
    assert (first.call_id, second.call_id) == ("call_8841", "call_8842")
    assert first.signature is not None and second.signature is None
    assert response.finish_reason == "tool_calls"
    assert response.native_finish_reason == "STOP"
    assert response.id == "7mF1aOb3KpuWz7IP4Y3TqAs"
    assert response.model == "gemini-3-flash-preview"


def test_usage_output_includes_thoughts_and_reasoning_counts_them() -> None:
    usage = gemini.decode_response(load("response_function_calls.json")).usage
    assert usage is not None
    assert usage.input_tokens == 88
    assert usage.output_tokens == 24 + 190
    assert usage.reasoning_tokens == 190
    assert usage.total_tokens == 302


def test_text_response_signature_sits_on_the_last_text_part() -> None:
    response = gemini.decode_response(load("response_text.json"))
    thought, answer = response.message.parts
    assert isinstance(thought, ReasoningPart) and thought.reasoning_kind == "summary"
    assert isinstance(answer, TextPart) and answer.signature is not None
    assert answer.text == "The answer is 42."


def test_unexpected_tool_call_keeps_native_reason_parts_and_signature() -> None:
    """Trap 24: UNEXPECTED_TOOL_CALL still carries a signed call that must be kept."""
    response = gemini.decode_response(load("response_unexpected_tool_call.json"))
    assert response.native_finish_reason == "UNEXPECTED_TOOL_CALL"
    assert response.finish_reason == "error"
    (call,) = response.message.parts
    assert isinstance(call, ToolCallPart) and call.signature is not None
    assert call.call_id.startswith("gcall_")


def test_safety_block_without_content_keeps_native_reason() -> None:
    """Trap 32: SAFETY does not collapse silently; the native value survives."""
    response = gemini.decode_response(load("response_safety_blocked.json"))
    assert response.message.parts == ()
    assert (response.finish_reason, response.native_finish_reason) == ("content_filter", "SAFETY")


def test_foreign_response_encodes_with_gemini_defaults() -> None:
    response = Response(
        message=Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="raw", text="thinking"),
                ReasoningPart(
                    reasoning_kind="encrypted",
                    opaque=Opaque(
                        provider="openai", format="openai.responses.encrypted_content", data="gAAA"
                    ),
                ),
                TextPart(text="Hello"),
                RefusalPart(text="I can't help with that."),
                ToolCallPart(call_id="call_abc", name="lookup", arguments='{"q": "x"}'),
            ),
        ),
        id="resp_1",
        model="gpt-5",
        finish_reason="tool_calls",
        native_finish_reason="tool_calls",
        usage=Usage(input_tokens=10, output_tokens=30, reasoning_tokens=20),
    )
    wire = gemini.encode_response(response)
    assert wire == {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "thinking", "thought": True},
                        {"text": "Hello"},
                        {"text": "I can't help with that."},
                        {"functionCall": {"id": "call_abc", "name": "lookup", "args": {"q": "x"}}},
                    ],
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 10,
            "thoughtsTokenCount": 20,
            "totalTokenCount": 40,
        },
        "modelVersion": "gpt-5",
        "responseId": "resp_1",
    }
    parsed = types.GenerateContentResponse.model_validate(wire)
    assert parsed.function_calls is not None and parsed.function_calls[0].args == {"q": "x"}


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"candidates": {}}, "candidates"),
        ({"candidates": [{"content": {"parts": {}}}]}, "candidates[0].content.parts"),
        ({"candidates": [{"finishReason": 3}]}, "candidates[0].finishReason"),
        (
            {"candidates": [], "usageMetadata": {"promptTokenCount": "9"}},
            "usageMetadata.promptTokenCount",
        ),
        ({"responseId": 5}, "responseId"),
        (
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"functionCall": {"name": "f", "args": [1]}}],
                        }
                    }
                ]
            },
            "candidates[0].content.parts[0].functionCall.args",
        ),
    ],
)
def test_malformed_response_raises_decode_error_naming_the_path(
    payload: JsonObject, path: str
) -> None:
    with pytest.raises(DecodeError) as caught:
        gemini.decode_response(payload)
    assert caught.value.path == path


def test_fields_newer_than_the_sdk_survive_the_round_trip() -> None:
    """Trap 36: the SDK's response parser strips unknown fields; the codec keeps them."""
    payload: JsonObject = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "hi", "futureSignatureField": "abc", "partMetadata": {"k": 1}}
                    ],
                    "futureContentField": True,
                },
                "finishReason": "STOP",
                "futureCandidateField": [1],
            }
        ],
        "modelStatus": {"state": "ACTIVE"},
        "futureTopLevel": {"x": None},
    }
    response = gemini.decode_response(copy.deepcopy(payload))
    assert response.message.parts[0] == TextPart(
        text="hi",
        extra={"gemini": {"fields": {"futureSignatureField": "abc", "partMetadata": {"k": 1}}}},
    )
    assert gemini.encode_response(response) == payload
    stream = gemini.StreamDecoder()
    folded = fold_updates(stream.feed(SseEvent(data=json.dumps(payload))))
    assert folded.message.parts == response.message.parts

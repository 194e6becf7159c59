"""Requests: golden round trips, SDK validation, snake_case input, decode errors."""

from __future__ import annotations

import copy
import json

import pytest

from interlock.codecs import gemini
from interlock.transcript import (
    DecodeError,
    JsonObject,
    Message,
    ReasoningPart,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    dump_request,
    load_request,
)
from tests.codecs.gemini.wire_fixtures import fixture_names, load, validate_request

REQUESTS = fixture_names("request_")


@pytest.mark.parametrize("name", REQUESTS)
def test_golden_request_round_trip_is_exact(name: str) -> None:
    payload = load(name)
    original = copy.deepcopy(payload)
    encoded = gemini.encode_request(gemini.decode_request(payload, model="gemini-3-flash-preview"))
    assert encoded.payload == original
    assert json.dumps(encoded.payload, sort_keys=True) == json.dumps(original, sort_keys=True)
    assert encoded.warnings == ()
    assert payload == original, "decoding must not mutate its input"


@pytest.mark.parametrize("name", REQUESTS)
def test_golden_request_survives_transcript_serialization(name: str) -> None:
    request = gemini.decode_request(load(name), model="m")
    stored = load_request(json.loads(json.dumps(dump_request(request))))
    assert gemini.encode_request(stored).payload == load(name)


@pytest.mark.parametrize("name", REQUESTS)
def test_encoded_requests_validate_against_sdk_types(name: str) -> None:
    validate_request(gemini.encode_request(gemini.decode_request(load(name))).payload)


def test_parallel_request_decodes_to_the_canonical_transcript() -> None:
    request = gemini.decode_request(load("request_parallel_calls.json"), model="gemini-3")
    roles = [message.role for message in request.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assistant = request.messages[2]
    thought, first, second = assistant.parts
    assert isinstance(thought, ReasoningPart) and thought.reasoning_kind == "summary"
    assert isinstance(first, ToolCallPart) and isinstance(second, ToolCallPart)
    assert first.signature is not None and first.signature.provider == "google"
    assert first.signature.format == "gemini.thought_signature"
    assert second.signature is None
    assert first.arguments == '{"city":"Paris"}'
    results = [message.parts[0] for message in request.messages[3:]]
    assert all(isinstance(result, ToolResultPart) for result in results)
    assert [result.call_id for result in results] == [first.call_id, second.call_id]  # pyright: ignore[reportAttributeAccessIssue]
    assert request.tool_choice is not None and request.tool_choice.mode == "required"
    assert request.tool_choice.names == ("get_weather",)
    assert request.options.include_reasoning is True
    assert request.options.reasoning_effort == "low"
    assert request.options.stop == ("END",)
    assert [spec.spec for spec in request.hosted_tools] == [{"googleSearch": {}}]
    assert request.model == "gemini-3"


def test_snake_case_input_is_accepted_and_camel_case_is_emitted() -> None:
    payload: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "f", "args": {"snake_key": 1}},
                        "thought_signature": "c2ln",
                    }
                ],
            },
        ],
        "system_instruction": {"parts": [{"text": "sys"}]},
        "tool_config": {"function_calling_config": {"mode": "AUTO"}},
        "generation_config": {
            "max_output_tokens": 5,
            "thinking_config": {"thinking_budget": 128, "include_thoughts": False},
        },
    }
    encoded = gemini.encode_request(gemini.decode_request(payload)).payload
    assert encoded == {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"name": "f", "args": {"snake_key": 1}},
                        "thoughtSignature": "c2ln",
                    }
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {
            "maxOutputTokens": 5,
            "thinkingConfig": {"includeThoughts": False, "thinkingBudget": 128},
        },
    }
    validate_request(encoded)


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"contents": {}}, "contents"),
        ({"contents": [[]]}, "contents[0]"),
        ({"contents": [{"role": 1, "parts": []}]}, "contents[0].role"),
        ({"contents": [{"role": "user", "parts": [{"text": 5}]}]}, "contents[0].parts[0].text"),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            "contents[0].parts[0].functionCall.name",
        ),
        (
            {
                "contents": [
                    {"role": "model", "parts": [{"functionCall": {"name": "f", "args": "{}"}}]}
                ]
            },
            "contents[0].parts[0].functionCall.args",
        ),
        (
            {"contents": [{"role": "model", "parts": [{"text": "", "thoughtSignature": 7}]}]},
            "contents[0].parts[0].thoughtSignature",
        ),
        (
            {
                "contents": [
                    {
                        "role": "user",
                        "parts": [{"functionResponse": {"name": "f", "response": "x"}}],
                    }
                ]
            },
            "contents[0].parts[0].functionResponse.response",
        ),
        (
            {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png"}}]}]},
            "contents[0].parts[0].inlineData.data",
        ),
        (
            {"contents": [{"role": "user", "parts": [{"text": "x", "thought": "yes"}]}]},
            "contents[0].parts[0].thought",
        ),
        (
            {"tools": [{"functionDeclarations": [{"description": "no name"}]}]},
            "tools[0].functionDeclarations[0].name",
        ),
        (
            {"toolConfig": {"functionCallingConfig": {"allowedFunctionNames": "f"}}},
            "toolConfig.functionCallingConfig.allowedFunctionNames",
        ),
        ({"generationConfig": {"temperature": "hot"}}, "generationConfig.temperature"),
        ({"generationConfig": {"maxOutputTokens": True}}, "generationConfig.maxOutputTokens"),
        (
            {"generationConfig": {"thinkingConfig": {"thinkingBudget": 1.5}}},
            "generationConfig.thinkingConfig.thinkingBudget",
        ),
        ({"systemInstruction": "be nice"}, "systemInstruction"),
    ],
)
def test_malformed_request_raises_decode_error_naming_the_path(
    payload: JsonObject, path: str
) -> None:
    with pytest.raises(DecodeError) as caught:
        gemini.decode_request(payload)
    assert caught.value.path == path


def test_canonical_request_from_another_dialect_encodes_with_defaults() -> None:
    request = Request(
        model="gemini-3-flash-preview",
        messages=(
            Message(role="system", parts=(TextPart(text="Be brief."),)),
            Message(role="user", parts=(TextPart(text="Hi"),)),
        ),
    )
    encoded = gemini.encode_request(request, policy=ReplayPolicy())
    assert encoded.payload == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
    }
    validate_request(encoded.payload)

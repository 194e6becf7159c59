"""Both spellings of Gemini field names decode alike; output is always camelCase.

The REST API (proto3 JSON) accepts the original snake_case field names, and some clients and
recorded cassettes send them (``function_call``, ``inline_data``, ``usage_metadata``…). Every
golden fixture and conformance vector, rewritten in snake_case (user data untouched), must
decode to the same canonical value and encode to the same camelCase wire.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import cast

import pytest

from interlock.codecs import gemini
from interlock.codecs.gemini._wire import USER_DATA_FIELDS, camel, wire_spelling
from interlock.transcript import (
    HostedToolSpec,
    JsonObject,
    JsonValue,
    Response,
    dump_request,
    dump_response,
    fold_updates,
)
from tests.codecs.gemini.wire_fixtures import FIXTURES, load, load_stream

VECTORS = Path(__file__).parents[3] / "conformance" / "vectors" / "gemini"


def snake(value: JsonValue) -> JsonValue:
    """``value`` with every Gemini field name in snake_case, user data left alone."""
    if isinstance(value, list):
        return [snake(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: JsonObject = {}
    for key, item in value.items():
        name = re.sub(r"[A-Z]", lambda match: "_" + match.group(0).lower(), key)
        out[name] = item if camel(key) in USER_DATA_FIELDS else snake(item)
    return out


def _cases() -> list[tuple[str, str, JsonValue]]:
    cases: list[tuple[str, str, JsonValue]] = []
    for path in sorted(FIXTURES.glob("*.json")):
        kind = "request" if path.name.startswith("request") else "response"
        cases.append((path.name, kind, cast(JsonValue, load(path.name))))
    for path in sorted(FIXTURES.glob("*.jsonl")):
        cases.append((path.name, "stream", cast(JsonValue, load_stream(path.name))))
    for path in sorted(VECTORS.glob("*.json")):
        vector = json.loads(path.read_text(encoding="utf-8"))
        wire = vector["wire"]
        if vector["kind"] == "stream":
            wire = [event["data"] for event in wire]
        cases.append((f"vector:{path.stem}", vector["kind"], wire))
    return cases


CASES = _cases()


def _decode(kind: str, wire: JsonValue) -> JsonValue:
    """The canonical dump, in the one spelling (the dump's top key is not a field name)."""
    if kind == "request":
        dumped = dump_request(gemini.decode_request(cast(JsonObject, wire), model="gemini-3-pro"))
        return {key: wire_spelling(value) for key, value in dumped.items()}
    if kind == "response":
        dumped = dump_response(gemini.decode_response(cast(JsonObject, wire)))
        return {key: wire_spelling(value) for key, value in dumped.items()}
    decoder = gemini.StreamDecoder()
    updates = [
        update for chunk in cast(list[JsonObject], wire) for update in decoder.feed_chunk(chunk)
    ]
    dumped = dump_response(fold_updates([*updates, *decoder.finish()]))
    return {key: wire_spelling(value) for key, value in dumped.items()}


def _encode(kind: str, wire: JsonValue) -> JsonValue:
    if kind == "request":
        request = gemini.decode_request(cast(JsonObject, wire), model="gemini-3-pro")
        return gemini.encode_request(request).payload
    if kind == "response":
        return gemini.encode_response(gemini.decode_response(cast(JsonObject, wire)))
    return None


@pytest.mark.parametrize(("name", "kind", "wire"), CASES, ids=[case[0] for case in CASES])
def test_snake_case_input_decodes_like_camel_case(name: str, kind: str, wire: JsonValue) -> None:
    snaked = snake(wire)
    assert snaked != wire, f"{name}: nothing to rename, the case proves nothing"
    # Values the codec keeps verbatim (unknown fields) keep their inner spelling; compare
    # in the one spelling, as the conformance runner does.
    assert _decode(kind, snaked) == _decode(kind, wire)
    encoded = _encode(kind, snaked)
    if encoded is not None:
        assert encoded == _encode(kind, wire) or wire_spelling(encoded) == _encode(kind, wire)
        assert wire_spelling(encoded) == wire_spelling(wire)


def test_known_fields_are_always_written_in_camel_case() -> None:
    body: JsonObject = {
        "system_instruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "hi"},
                    {"inline_data": {"mime_type": "image/png", "data": "iVBO"}},
                ],
            },
            {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "f", "args": {"snake_key": 1}},
                        "thought_signature": "c2ln",
                    }
                ],
            },
            {
                "role": "user",
                "parts": [{"function_response": {"name": "f", "response": {"some_value": 2}}}],
            },
        ],
        "tool_config": {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}
        },
        "generation_config": {
            "max_output_tokens": 9,
            "stop_sequences": ["x"],
            "thinking_config": {"include_thoughts": True, "thinking_budget": 64},
        },
        "safety_settings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
    }
    request = gemini.decode_request(body, model="gemini-2.5-flash")
    assert request.options.max_output_tokens == 9 and request.options.thinking_budget == 64
    assert request.tool_choice is not None and request.tool_choice.names == ("f",)
    assert request.messages[0].role == "system"
    payload = gemini.encode_request(request).payload
    assert list(payload) == [
        "contents",
        "systemInstruction",
        "toolConfig",
        "generationConfig",
        "safetySettings",
    ]
    parts = cast(
        list[JsonObject], cast(JsonObject, cast(list[JsonValue], payload["contents"])[1])["parts"]
    )
    assert parts[0] == {
        "functionCall": {"name": "f", "args": {"snake_key": 1}},
        "thoughtSignature": "c2ln",
    }
    result = cast(
        list[JsonObject], cast(JsonObject, cast(list[JsonValue], payload["contents"])[2])["parts"]
    )
    assert result[0]["functionResponse"] == {"name": "f", "response": {"some_value": 2}}
    assert payload["generationConfig"] == {
        "maxOutputTokens": 9,
        "stopSequences": ["x"],
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 64},
    }


def test_snake_case_structured_output_is_carried() -> None:
    schema: JsonObject = {"type": "object", "properties": {"first_name": {"type": "string"}}}
    request = gemini.decode_request(
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generation_config": {
                "response_mime_type": "application/json",
                "response_json_schema": schema,
            },
        }
    )
    assert request.response_format is not None
    assert request.response_format.type == "json_schema"
    assert request.response_format.schema == schema
    generation = gemini.encode_request(request).payload["generationConfig"]
    assert generation == {"responseMimeType": "application/json", "responseJsonSchema": schema}


def test_snake_case_prompt_block_is_a_content_filter_finish() -> None:
    blocked: JsonObject = {
        "prompt_feedback": {"block_reason": "SAFETY"},
        "usage_metadata": {"prompt_token_count": 4},
    }
    response = gemini.decode_response(blocked)
    assert (response.finish_reason, response.native_finish_reason) == ("content_filter", "SAFETY")
    assert response.usage is not None and response.usage.input_tokens == 4
    decoder = gemini.StreamDecoder()
    folded: Response = fold_updates([*decoder.feed_chunk(blocked), *decoder.finish()])
    assert folded.finish_reason == "content_filter"


def test_snake_case_hosted_tools_and_parts_come_out_in_camel_case() -> None:
    request = gemini.decode_request(
        {
            "contents": [
                {"role": "user", "parts": [{"text": "run it"}]},
                {
                    "role": "model",
                    "parts": [{"executable_code": {"language": "PYTHON", "code": "print(1)"}}],
                },
            ],
            "tools": [{"google_search": {}}, {"code_execution": {}}],
        }
    )
    assert request.hosted_tools == (
        HostedToolSpec(provider="google", spec={"googleSearch": {}}),
        HostedToolSpec(provider="google", spec={"codeExecution": {}}),
    )
    hosted = request.messages[1].parts[0]
    assert hosted.kind == "hosted_tool" and hosted.item_type == "executableCode"
    payload = gemini.encode_request(request).payload
    assert payload["tools"] == [{"googleSearch": {}}, {"codeExecution": {}}]
    model_turn = cast(JsonObject, cast(list[JsonValue], payload["contents"])[1])
    assert model_turn["parts"] == [{"executableCode": {"language": "PYTHON", "code": "print(1)"}}]


def test_wire_spelling_never_renames_user_data() -> None:
    wire: JsonObject = {
        "function_call": {"name": "f", "args": {"snake_key": {"inner_key": 1}}},
        "tools": [
            {
                "function_declarations": [
                    {"name": "f", "parameters_json_schema": {"properties": {"a_b": {}}}}
                ]
            }
        ],
    }
    assert wire_spelling(wire) == {
        "functionCall": {"name": "f", "args": {"snake_key": {"inner_key": 1}}},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "f", "parametersJsonSchema": {"properties": {"a_b": {}}}}
                ]
            }
        ],
    }

"""Structured output carried canonically in every direction (and exact in its own dialect)."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.codecs._structured import json_schema
from interlock.transcript import Request, ResponseFormat

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
CHAT: dict[str, Any] = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
    },
}
RESPONSES: dict[str, Any] = {
    "model": "m",
    "input": "hi",
    "text": {
        "format": {"type": "json_schema", "name": "weather", "schema": SCHEMA, "strict": True},
        "verbosity": "low",
    },
}
GEMINI: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "generationConfig": {
        "temperature": 0.1,
        "responseMimeType": "application/json",
        "responseJsonSchema": SCHEMA,
    },
}


def _decoded() -> dict[str, Request]:
    return {
        "chat": openai_chat.decode_request(CHAT),
        "responses": openai_responses.decode_request(RESPONSES),
        "gemini": gemini.decode_request(GEMINI, model="m"),
    }


def test_each_dialect_decodes_its_structured_output_canonically_and_back_exactly() -> None:
    decoded = _decoded()
    for request in decoded.values():
        assert request.response_format is not None
        assert request.response_format.type == "json_schema"
        assert request.response_format.schema == SCHEMA
    assert openai_chat.encode_request(decoded["chat"]).payload == CHAT
    assert openai_responses.encode_request(decoded["responses"]).payload == RESPONSES
    assert gemini.encode_request(decoded["gemini"]).payload == GEMINI


@pytest.mark.parametrize("source", ["chat", "responses", "gemini"])
def test_structured_output_arrives_in_every_other_dialect(source: str) -> None:
    request = _decoded()[source]
    chat = openai_chat.encode_request(request).payload
    assert chat["response_format"]["json_schema"]["schema"] == SCHEMA
    responses = openai_responses.encode_request(request).payload
    assert responses["text"]["format"]["schema"] == SCHEMA
    encoded = gemini.encode_request(request)
    config = encoded.payload["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SCHEMA
    dropped = [w.location for w in encoded.warnings if w.location.startswith("response_format")]
    assert dropped == ([] if source == "gemini" else ["response_format.strict"])


def test_json_mode_and_text_mode_travel_too() -> None:
    request = openai_chat.decode_request({**CHAT, "response_format": {"type": "json_object"}})
    assert gemini.encode_request(request).payload["generationConfig"] == {
        "responseMimeType": "application/json"
    }
    back = gemini.decode_request({**GEMINI, "generationConfig": {"responseMimeType": "text/plain"}})
    assert openai_responses.encode_request(back).payload["text"] == {"format": {"type": "text"}}


def test_a_gemini_openapi_schema_is_converted_for_openai() -> None:
    openapi = {
        "type": "OBJECT",
        "properties": {"city": {"type": "STRING", "nullable": True}},
        "required": ["city"],
    }
    config = {"responseMimeType": "application/json", "responseSchema": openapi}
    request = gemini.decode_request({**GEMINI, "generationConfig": config}, model="m")
    assert request.response_format == ResponseFormat(
        type="json_schema", schema=openapi, schema_dialect="openapi"
    )
    assert gemini.encode_request(request).payload["generationConfig"] == config
    sent = openai_chat.encode_request(request).payload["response_format"]["json_schema"]
    assert sent == {
        "name": "response",
        "schema": {
            "type": "object",
            "properties": {"city": {"type": ["string", "null"]}},
            "required": ["city"],
        },
    }
    assert json_schema(request.response_format) == sent["schema"]


def test_an_unrecognised_shape_stays_verbatim_and_is_warned_elsewhere() -> None:
    odd = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA, "extra": 1}}
    request = openai_chat.decode_request({**CHAT, "response_format": odd})
    assert request.response_format is None
    assert openai_chat.encode_request(request).payload["response_format"] == odd
    warnings = gemini.encode_request(request).warnings
    assert [w.location for w in warnings] == ["openai-chat.response_format"]

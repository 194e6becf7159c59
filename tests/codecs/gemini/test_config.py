"""tools / toolConfig / generationConfig mapping (trap 26) and their round trips."""

from __future__ import annotations

import pytest

from interlock.codecs import gemini, openai_chat
from interlock.transcript import (
    GenerationOptions,
    HostedToolSpec,
    JsonObject,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolChoice,
    ToolSpec,
)
from tests.codecs.gemini.wire_fixtures import validate_request

HI = Message(role="user", parts=(TextPart(text="hi"),))


def encode(
    policy: ReplayPolicy = ReplayPolicy(),  # noqa: B008 -- frozen, immutable default
    **fields: object,
) -> tuple[JsonObject, list[str]]:
    request = Request(model="m", messages=(HI,), **fields)  # pyright: ignore[reportArgumentType]
    encoded = gemini.encode_request(request, policy=policy)
    validate_request(encoded.payload)
    return encoded.payload, [warning.code for warning in encoded.warnings]


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice(mode="auto"), {"mode": "AUTO"}),
        (ToolChoice(mode="none"), {"mode": "NONE"}),
        (ToolChoice(mode="required"), {"mode": "ANY"}),
        (ToolChoice(mode="required", names=("f",)), {"mode": "ANY", "allowedFunctionNames": ["f"]}),
    ],
)
def test_tool_choice_maps_to_function_calling_mode(choice: ToolChoice, config: JsonObject) -> None:
    payload, _ = encode(tools=(ToolSpec(name="f"),), tool_choice=choice)
    assert payload["toolConfig"] == {"functionCallingConfig": config}
    assert gemini.decode_request(payload).tool_choice == choice


def test_validated_mode_survives_in_extra() -> None:
    payload: JsonObject = {
        "contents": [],
        "toolConfig": {
            "functionCallingConfig": {"mode": "VALIDATED", "allowedFunctionNames": ["f"]}
        },
    }
    request = gemini.decode_request(payload)
    assert request.tool_choice == ToolChoice(mode="auto", names=("f",))
    assert gemini.encode_request(request).payload == payload


def test_foreign_tools_use_json_schema_and_report_what_gemini_cannot_carry() -> None:
    payload, warnings = encode(
        ReplayPolicy(mode="degrade"),
        tools=(
            ToolSpec(
                name="f",
                description="d",
                parameters={"type": "object", "additionalProperties": False},
                strict=True,
            ),
        ),
        hosted_tools=(
            HostedToolSpec(provider="openai", spec={"type": "web_search"}),
            HostedToolSpec(provider="google", spec={"urlContext": {}}),
        ),
        parallel_tool_calls=False,
    )
    assert payload["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "f",
                    "description": "d",
                    "parametersJsonSchema": {"type": "object", "additionalProperties": False},
                }
            ]
        },
        {"urlContext": {}},
    ]
    assert warnings == [
        "parallel_tool_calls_ignored",
        "tool_strict_dropped",
        "hosted_tool_unsupported",
    ]


def test_another_providers_hosted_tool_is_refused_in_strict_mode() -> None:
    """Trap 25: an OpenAI hosted tool has no Gemini form; strict refuses, never drops silently."""
    with pytest.raises(LossyHistoryError) as caught:
        encode(
            hosted_tools=(
                HostedToolSpec(provider="google", spec={"urlContext": {}}),
                HostedToolSpec(provider="openai", spec={"type": "web_search"}),
            )
        )
    assert (caught.value.code, caught.value.location) == (
        "hosted_tool_unsupported",
        "hosted_tools[1]",
    )


def test_tool_grouping_round_trips() -> None:
    payload: JsonObject = {
        "contents": [],
        "tools": [
            {"googleSearch": {}},
            {"functionDeclarations": [{"name": "a"}]},
            {
                "functionDeclarations": [{"name": "b", "parameters": {"type": "STRING"}}],
                "codeExecution": {},
            },
        ],
    }
    request = gemini.decode_request(payload)
    assert [tool.name for tool in request.tools] == ["a", "b"]
    assert gemini.encode_request(request).payload == payload


def test_thinking_options_map_both_ways() -> None:
    options = GenerationOptions(
        temperature=0.5,
        max_output_tokens=9,
        stop=("x",),
        seed=1,
        include_reasoning=True,
        thinking_budget=-1,
        reasoning_effort="high",
    )
    payload, warnings = encode(options=options)
    assert payload["generationConfig"] == {
        "temperature": 0.5,
        "maxOutputTokens": 9,
        "stopSequences": ["x"],
        "seed": 1,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": -1, "thinkingLevel": "HIGH"},
    }
    assert warnings == []
    assert gemini.decode_request(payload).options == options


def test_openai_reasoning_settings_translate_or_warn() -> None:
    payload, warnings = encode(
        options=GenerationOptions(reasoning_effort="none", reasoning_summary="auto")
    )
    assert payload["generationConfig"] == {"thinkingConfig": {"includeThoughts": True}}
    # the summary setting has no Gemini field: it becomes includeThoughts, with a warning
    assert warnings == ["option_dropped", "reasoning_effort_dropped"]


def test_an_explicit_null_description_and_empty_stop_list_come_back_as_sent() -> None:
    body: JsonObject = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "f", "description": None}]}],
        "generationConfig": {"stopSequences": []},
    }
    request = gemini.decode_request(body)
    assert request.tools[0].description is None and request.options.stop == ()
    encoded = gemini.encode_request(request)
    assert encoded.payload == body and encoded.warnings == ()


def test_tools_given_as_one_object_decode_and_come_back_as_one_object() -> None:
    declaration: JsonObject = {"name": "f", "parametersJsonSchema": {"type": "object"}}
    body: JsonObject = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": {"functionDeclarations": [declaration]},
    }
    request = gemini.decode_request(body)
    assert [tool.name for tool in request.tools] == ["f"]
    assert gemini.encode_request(request).payload == body
    # Translated elsewhere and back, the request is an ordinary list again.
    again = gemini.decode_request({**body, "tools": [{"functionDeclarations": [declaration]}]})
    assert gemini.encode_request(again).payload["tools"] == [
        {"functionDeclarations": [declaration]}
    ]


OPENAPI_PARAMETERS: JsonObject = {
    "type": "OBJECT",
    "properties": {
        "a": {"type": "NUMBER", "description": "first"},
        "type": {"type": "STRING", "enum": ["UPPER", "lower"], "nullable": True},
        "nullable": {"type": "ARRAY", "items": {"type": "INTEGER"}},
    },
    "required": ["a"],
}


def test_openapi_parameters_become_json_schema_and_go_back_to_gemini_unchanged() -> None:
    """Gemini's ``parameters`` is the OpenAPI subset (upper-case types, ``nullable``); every
    other dialect needs JSON Schema. Property names and enum values are data, not keywords."""
    body: JsonObject = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "f", "parameters": OPENAPI_PARAMETERS}]}],
    }
    request = gemini.decode_request(body)
    assert request.tools[0].parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "first"},
            "type": {"type": ["string", "null"], "enum": ["UPPER", "lower"]},
            "nullable": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["a"],
    }
    assert gemini.encode_request(request).payload == body
    chat = openai_chat.encode_request(request).payload
    assert chat["tools"][0]["function"]["parameters"] == request.tools[0].parameters

"""Tools and tool_choice (provider-wire.md trap 26: Chat nests what Responses keeps flat)."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs.openai_chat import decode_request, encode_request
from interlock.transcript import Message, Request, TextPart, ToolChoice, ToolSpec

FUNCTION = {"type": "function", "function": {"name": "f"}}
CUSTOM = {"type": "custom", "custom": {"name": "g"}}
CHOICES: list[tuple[Any, ToolChoice]] = [
    ("auto", ToolChoice(mode="auto")),
    ("none", ToolChoice(mode="none")),
    ("required", ToolChoice(mode="required")),
    ({"type": "function", "function": {"name": "f"}}, ToolChoice(mode="required", names=("f",))),
    ({"type": "custom", "custom": {"name": "g"}}, ToolChoice(mode="required", names=("g",))),
    (
        {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [FUNCTION]}},
        ToolChoice(mode="required", names=("f",)),
    ),
    (
        {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [FUNCTION, CUSTOM]}},
        ToolChoice(mode="auto", names=("f", "g")),
    ),
]
TOOLS = [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
    {"type": "custom", "custom": {"name": "g", "format": {"type": "text"}}},
]


@pytest.mark.parametrize(("wire", "canonical"), CHOICES, ids=[str(c) for _, c in CHOICES])
def test_tool_choice_shapes_round_trip(wire: Any, canonical: ToolChoice) -> None:
    payload = {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "tools": TOOLS,
        "tool_choice": wire,
    }
    request = decode_request(payload)
    assert request.tool_choice == canonical
    assert encode_request(request).payload == payload


def test_canonical_choices_pick_the_chat_nesting() -> None:
    base = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="x"),)),),
        tools=(ToolSpec(name="f"), ToolSpec(name="h")),
    )

    def encoded(choice: ToolChoice) -> Any:
        from dataclasses import replace

        return encode_request(replace(base, tool_choice=choice)).payload["tool_choice"]

    assert encoded(ToolChoice(mode="required", names=("f",))) == {
        "type": "function",
        "function": {"name": "f"},
    }
    assert encoded(ToolChoice(mode="required", names=("f", "h"))) == {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [FUNCTION, {"type": "function", "function": {"name": "h"}}],
        },
    }
    assert encode_request(base).payload["tools"] == [
        {"type": "function", "function": {"name": "f"}},
        {"type": "function", "function": {"name": "h"}},
    ]


def test_custom_tool_calls_keep_free_text_input() -> None:
    payload = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "custom", "custom": {"name": "g", "input": "not json"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ],
    }
    request = decode_request(payload)
    assert request.messages[1].tool_calls[0].arguments == "not json"
    assert encode_request(request).payload == payload


def test_a_tool_call_without_arguments_decodes_as_empty_and_round_trips() -> None:
    """Some OpenAI-compatible services omit ``arguments`` for a call that takes none."""
    from interlock.codecs.openai_chat import decode_response, encode_response

    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f"}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    response = decode_response(body)
    assert [(call.name, call.arguments) for call in response.message.tool_calls] == [("f", "")]
    assert encode_response(response) == body

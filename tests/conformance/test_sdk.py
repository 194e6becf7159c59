"""SDK types as validators (``interlock/conformance/_sdk.py``): provider-wire.md traps 34–36."""

from __future__ import annotations

import copy

from openai.types.chat import ChatCompletionAssistantMessageParam
from pydantic import TypeAdapter

from interlock.conformance import _sdk  # pyright: ignore[reportPrivateUsage]
from interlock.transcript import JsonObject

ASSISTANT: JsonObject = {
    "role": "assistant",
    "content": None,
    "reasoning_content": "",
    "tool_calls": [
        {
            "id": "a",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
            "extra_content": {"google": {"thought_signature": "c2ln"}},
        }
    ],
}
CHAT: JsonObject = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "hi"},
        ASSISTANT,
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ],
}


def test_trap34_a_plain_type_adapter_strips_vendor_keys_silently() -> None:
    """The trap itself: validation without ``extra="forbid"`` succeeds and loses the key."""
    validated = TypeAdapter(ChatCompletionAssistantMessageParam).validate_python(ASSISTANT)
    assert "reasoning_content" not in validated


def test_trap34_unknown_keys_are_reported_at_any_depth_and_never_stripped() -> None:
    payload = copy.deepcopy(CHAT)
    problems = _sdk.chat_request(payload)
    assert problems == [
        "messages[1].reasoning_content: not declared by the SDK type",
        "messages[1].tool_calls[0].extra_content: not declared by the SDK type",
    ]
    assert payload == CHAT  # the checker reports; it never hands back the validated object


def test_trap34_declared_vendor_keys_are_accepted_and_kept() -> None:
    payload = copy.deepcopy(CHAT)
    vendor = frozenset({"reasoning_content", "extra_content"})
    assert _sdk.chat_request(payload, vendor) == []
    assert payload == CHAT


def test_trap34_responses_items_are_checked_key_by_key() -> None:
    payload: JsonObject = {
        "model": "m",
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "c", "output": "ok", "vendor": 1},
        ],
    }
    assert _sdk.responses_request(payload) == ["input[1].vendor: not declared by the SDK type"]

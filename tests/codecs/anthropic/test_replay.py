"""Replay: Anthropic signatures and redacted thinking go back exactly, and only to Anthropic.

Every other encoder treats them as foreign (dropped with a warning, or refused); foreign
payloads never reach Anthropic; the leading-thinking rule refuses or degrades explicitly.
"""

from __future__ import annotations

import json

import pytest

from interlock.codecs import anthropic, gemini, openai_chat, openai_responses
from interlock.transcript import (
    Encoded,
    GenerationOptions,
    LossyHistoryError,
    Message,
    Opaque,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from tests.codecs.anthropic.wire_fixtures import load

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"


def anthropic_history() -> Request:
    return anthropic.decode_request(load("request_thinking_tool_turn"))


def test_signatures_go_back_to_anthropic_byte_for_byte() -> None:
    text = json.dumps(anthropic.encode_request(anthropic_history()).payload)
    assert SIGNATURE in text and REDACTED in text


@pytest.mark.parametrize(
    "encode",
    [
        lambda r, p: gemini.encode_request(r, policy=p),
        lambda r, p: openai_responses.encode_request(r, policy=p),
        *(
            (lambda r, p, d=dialect: openai_chat.encode_request(r, policy=p, reasoning_dialect=d))
            for dialect in ("none", "reasoning_content", "reasoning", "openrouter", "gemini-compat")
        ),
    ],
)
def test_other_encoders_treat_anthropic_payloads_as_foreign(encode: object) -> None:
    request = anthropic_history()
    request = Request(
        model="other",
        messages=request.messages,
        tools=request.tools,
        options=GenerationOptions(max_output_tokens=100),
    )
    call = encode  # a (request, policy) -> Encoded function
    encoded: Encoded = call(request, ReplayPolicy(mode="degrade"))  # type: ignore[operator]
    text = json.dumps(encoded.payload)
    assert SIGNATURE not in text and REDACTED not in text
    codes = {warning.code for warning in encoded.warnings}
    assert "opaque_dropped" in codes or "reasoning_dropped" in codes, codes
    with pytest.raises(LossyHistoryError):
        call(request, ReplayPolicy(foreign_opaque="refuse"))  # type: ignore[operator]


def foreign_tool_loop(budget: int | None) -> Request:
    """A tool loop whose assistant turn came from Gemini (signed for Gemini only)."""
    google = Opaque(provider="google", format="gemini.thought_signature", data="c2ln")
    return Request(
        model="claude-sonnet-4-5",
        messages=(
            Message(role="user", parts=(TextPart(text="Weather?"),)),
            Message(
                role="assistant",
                parts=(
                    ToolCallPart(
                        call_id="call_1", name="get_weather", arguments="{}", signature=google
                    ),
                ),
            ),
            Message(
                role="tool",
                parts=(ToolResultPart(call_id="call_1", output=(TextPart(text="15"),)),),
            ),
        ),
        tools=(ToolSpec(name="get_weather"),),
        options=GenerationOptions(max_output_tokens=8000, thinking_budget=budget),
    )


def test_a_foreign_tool_loop_with_thinking_on_is_refused_in_strict_mode() -> None:
    with pytest.raises(LossyHistoryError) as caught:
        anthropic.encode_request(foreign_tool_loop(2048))
    assert caught.value.code == "thinking_block_missing"
    assert caught.value.location == "messages[1]"


def test_degrade_sends_it_with_thinking_disabled_and_says_so() -> None:
    encoded = anthropic.encode_request(foreign_tool_loop(2048), policy=ReplayPolicy(mode="degrade"))
    assert encoded.payload["thinking"] == {"type": "disabled"}
    codes = [warning.code for warning in encoded.warnings]
    assert codes == ["opaque_dropped", "thinking_disabled"]
    assert "c2ln" not in json.dumps(encoded.payload)


def test_without_thinking_the_foreign_loop_goes_with_the_signature_dropped() -> None:
    encoded = anthropic.encode_request(foreign_tool_loop(None))
    assert "thinking" not in encoded.payload
    assert [warning.code for warning in encoded.warnings] == ["opaque_dropped"]

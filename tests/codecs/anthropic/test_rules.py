"""Anthropic's request rules: the pre-flight's error strings, and the encoder refusing first."""

from __future__ import annotations

import copy

import pytest

from interlock.codecs import anthropic
from interlock.transcript import JsonObject
from tests.codecs.anthropic.wire_fixtures import load


def tool_turn() -> JsonObject:
    return copy.deepcopy(load("request_thinking_tool_turn"))


def mutate(path: str, payload: JsonObject | None = None) -> JsonObject:
    """``payload`` (the fixture's tool turn by default) with the edit named ``path``."""
    payload = tool_turn() if payload is None else payload
    messages = payload["messages"]
    assert isinstance(messages, list)
    match path:
        case "no_max_tokens":
            del payload["max_tokens"]
        case "small_budget":
            payload["thinking"] = {"type": "enabled", "budget_tokens": 1023}
        case "budget_over_max":
            payload["max_tokens"] = 4000
        case "forced_tool":
            payload["tool_choice"] = {"type": "any"}
        case "assistant_first":
            messages.insert(0, {"role": "assistant", "content": "Hi"})
        case "two_users":
            messages.insert(1, {"role": "user", "content": "again"})
        case "empty_text":
            messages[0]["content"][0]["text"] = ""  # type: ignore[index] -- fixture shape known
        case "late_empty_text":
            messages[2]["content"][1]["text"] = ""  # type: ignore[index] -- fixture shape known
        case "text_before_results":
            messages[2]["content"].reverse()  # type: ignore[union-attr] -- fixture shape known
        case "orphan_result":
            messages[2]["content"][0]["tool_use_id"] = "toolu_zzz"  # type: ignore[index]
        case "no_tools":
            del payload["tools"]
            del payload["tool_choice"]
        case "bad_id":
            messages[1]["content"][3]["id"] = "functions.get:0"  # type: ignore[index]
            messages[2]["content"][0]["tool_use_id"] = "functions.get:0"  # type: ignore[index]
        case "unsigned_thinking":
            del messages[1]["content"][0]["signature"]  # type: ignore[union-attr,index]
        case "no_leading_thinking":
            del messages[1]["content"][0:2]  # type: ignore[union-attr]
        case _:
            raise AssertionError(path)
    return payload


CASES = {
    "no_max_tokens": "max_tokens: Field required",
    "small_budget": "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    "budget_over_max": "`max_tokens` must be greater than `thinking.budget_tokens`.",
    "forced_tool": "Thinking may not be enabled when tool_choice forces tool use.",
    "assistant_first": 'messages: first message must use the "user" role',
    "two_users": 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
    "empty_text": "messages: text content blocks must be non-empty",
    "late_empty_text": "messages: text content blocks must be non-empty",
    "text_before_results": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A09q90qw90lq917835lq9. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    "orphan_result": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after",
    "no_tools": "Requests which include `tool_use` or `tool_result` blocks must define tools.",
    "bad_id": "messages.1.content.3.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    "unsigned_thinking": "messages.1.content.0.thinking.signature: Field required",
    "no_leading_thinking": "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`.",
}


BOTH = [
    # (the case an earlier check finds, a later check's case applied first)
    ("no_max_tokens", "small_budget"),
    ("forced_tool", "assistant_first"),
    ("two_users", "empty_text"),
    ("two_users", "bad_id"),
    ("late_empty_text", "orphan_result"),
    ("late_empty_text", "bad_id"),
    ("orphan_result", "unsigned_thinking"),
    ("bad_id", "unsigned_thinking"),
    ("no_tools", "unsigned_thinking"),
]


@pytest.mark.parametrize(("reported", "other"), BOTH)
def test_of_two_rules_broken_the_one_checked_first_is_reported(reported: str, other: str) -> None:
    """The service's order (envelope, thinking settings, roles, content, tool pairing, thinking
    blocks) decides, wherever in the history each break is (``other``'s is as early or
    earlier)."""
    alone = anthropic.find_violation(mutate(other))
    assert alone is not None and alone.message.startswith(CASES[other])
    violation = anthropic.find_violation(mutate(reported, mutate(other)))
    assert violation is not None
    assert violation.message.startswith(CASES[reported]), violation.message


def test_the_fixture_breaks_no_rule() -> None:
    assert anthropic.find_violation(tool_turn()) is None


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_reports_the_service_message(case: str) -> None:
    violation = anthropic.find_violation(mutate(case))
    assert violation is not None
    assert violation.message.startswith(CASES[case])
    assert (violation.status, violation.type) == (400, "invalid_request_error")


def test_an_orphan_result_after_a_plain_turn_names_the_block() -> None:
    payload = {
        "model": "m",
        "max_tokens": 10,
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
        ],
    }
    violation = anthropic.find_violation(payload)
    assert violation is not None
    assert violation.message.startswith(
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1."
    )


@pytest.mark.parametrize(
    "case",
    sorted(set(CASES) - {"two_users", "empty_text", "late_empty_text", "unsigned_thinking"}),
)
def test_the_encoder_refuses_what_the_service_would_reject(case: str) -> None:
    request = anthropic.decode_request(mutate(case))
    with pytest.raises(ValueError, match="Anthropic"):
        anthropic.encode_request(request)


def test_the_encoder_leaves_out_empty_text_blocks() -> None:
    encoded = anthropic.encode_request(anthropic.decode_request(mutate("empty_text")))
    first = encoded.payload["messages"][0]  # type: ignore[index] -- list of objects
    assert {"type": "text", "text": ""} not in first["content"]  # type: ignore[index,operator]


def test_an_unsigned_thinking_block_is_never_sent_with_an_empty_signature() -> None:
    encoded = anthropic.encode_request(anthropic.decode_request(mutate("unsigned_thinking")))
    assistant = encoded.payload["messages"][1]  # type: ignore[index] -- list of objects
    assert assistant["content"][0]["type"] == "redacted_thinking"  # type: ignore[index]
    assert [warning.code for warning in encoded.warnings] == ["reasoning_dropped"]


def test_the_encoder_merges_same_role_messages_from_other_dialects() -> None:
    payload = mutate("two_users")
    request = anthropic.decode_request(payload)
    marks = request.messages[2].extra["anthropic"]
    assert marks.get("newMessage") is True
    with pytest.raises(ValueError, match="roles must alternate"):
        anthropic.encode_request(request)


def test_error_body_has_anthropic_shape() -> None:
    assert anthropic.encode_error(529, "Overloaded") == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    body = anthropic.encode_error(400, "bad", code="lossy_history", param="messages[2]")
    assert body["error"] == {
        "type": "invalid_request_error",
        "message": "bad",
        "details": {"error_code": "lossy_history", "param": "messages[2]"},
    }
    assert anthropic.encode_error(418, "x")["error"]["type"] == "invalid_request_error"  # type: ignore[index]

"""The wire-level pairing rule (provider-wire.md §2.4)."""

from __future__ import annotations

from typing import Any

from interlock.codecs.openai_chat import find_pairing_violation


def _assistant(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "tool_calls": calls}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "x"}


USER = {"role": "user", "content": "hi"}


def test_answers_in_any_order_pass() -> None:
    assert (
        find_pairing_violation([USER, _assistant("a", "b"), _tool("b"), _tool("a"), USER]) is None
    )


def test_missing_answer_names_the_ids_and_the_assistant() -> None:
    violation = find_pairing_violation([USER, _assistant("a", "b", "c"), _tool("b"), USER])
    assert violation is not None
    assert (violation.kind, violation.index, violation.call_ids) == (
        "missing_tool_results",
        1,
        ("a", "c"),
    )
    assert violation.param == "messages.[1].role"
    assert violation.message.endswith(
        "The following tool_call_ids did not have response messages: a, c"
    )


def test_unknown_or_duplicate_answer_is_an_orphan() -> None:
    assert find_pairing_violation([USER, _assistant("a"), _tool("z")]).index == 2  # type: ignore[union-attr]
    assert find_pairing_violation([USER, _assistant("a"), _tool("a"), _tool("a")]).index == 3  # type: ignore[union-attr]


def test_tool_message_first_is_an_orphan_with_openai_spelling() -> None:
    violation = find_pairing_violation([_tool("a")])
    assert violation is not None and violation.kind == "orphan_tool_message"
    assert "preceeding" in violation.message


def test_empty_tool_calls_need_no_answers() -> None:
    assert find_pairing_violation([USER, {"role": "assistant", "tool_calls": []}, USER]) is None

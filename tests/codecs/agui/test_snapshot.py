"""MESSAGES_SNAPSHOT: rendering a thread, and confirm_changes cleanup, in both directions.

The first six cases are agent-framework's ``test_confirm_changes_snapshot.py`` (reference
A12), restated on AG-UI wire messages.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
from ag_ui.core import Message as AguiMessage
from pydantic import TypeAdapter

from interlock.codecs.agui import (
    DECLINED_TEXT,
    clean_confirm_changes,
    confirm_changes_call_id,
    decode_run_input,
    messages_to_agui,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

from .scenarios import ENCRYPTED, KEY, SIGNATURE

MESSAGE = TypeAdapter(AguiMessage)
CONFIRM = confirm_changes_call_id("ap1")


def confirm_call(arguments: JsonValue, call_id: str = CONFIRM) -> JsonObject:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "confirm_changes", "arguments": arguments},
    }


def real_call(call_id: str = "call_target") -> JsonObject:
    return {"id": call_id, "type": "function", "function": {"name": "write_doc", "arguments": "{}"}}


def assistant(*calls: JsonValue, tool_calls: JsonValue = None) -> JsonObject:
    return {
        "id": "a1",
        "role": "assistant",
        "toolCalls": tool_calls if tool_calls is not None else list(calls),
    }


def answer(payload: JsonObject, call_id: str = CONFIRM) -> JsonObject:
    return {
        "id": "t-confirm",
        "role": "tool",
        "toolCallId": call_id,
        "content": json.dumps(payload),
    }


def result(call_id: str, content: str) -> JsonObject:
    return {"id": f"t-{call_id}", "role": "tool", "toolCallId": call_id, "content": content}


TARGET_ARGS = json.dumps({"function_name": "write_doc", "function_call_id": "call_target"})


# ---------------------------------------------------------- the reference's six cases


def test_non_list_tool_calls_resolve_no_target() -> None:
    snapshot = [
        assistant(tool_calls={"id": CONFIRM, "function": {"name": "confirm_changes"}}),
        answer({"accepted": True}),
    ]
    assert clean_confirm_changes(snapshot, {"call_target": "target result"}) == snapshot


def test_malformed_confirm_arguments_resolve_no_target() -> None:
    snapshot = [assistant(confirm_call("{not-json")), answer({"accepted": True})]
    assert clean_confirm_changes(snapshot, {"call_target": "target result"}) == snapshot


def test_the_original_call_id_picks_the_result_among_several() -> None:
    snapshot = [
        assistant(real_call(), confirm_call(TARGET_ARGS)),
        answer({"accepted": True}),
    ]
    cleaned = clean_confirm_changes(
        snapshot, {"call_old": "old result", "call_target": "target result"}
    )
    assert cleaned == [
        assistant(real_call()),
        {
            "id": "t-confirm",
            "role": "tool",
            "toolCallId": "call_target",
            "content": "target result",
        },
    ]


def test_an_explicit_payload_call_id_needs_no_assistant_message() -> None:
    snapshot = [answer({"accepted": True, "function_call_id": "call_target"})]
    cleaned = clean_confirm_changes(snapshot, {"call_target": "target result"})
    assert cleaned == [
        {"id": "t-confirm", "role": "tool", "toolCallId": "call_target", "content": "target result"}
    ]


def test_a_rejection_is_cleaned_even_without_results() -> None:
    snapshot = [assistant(confirm_call(TARGET_ARGS)), answer({"accepted": False})]
    cleaned = clean_confirm_changes(snapshot, {})
    assert cleaned == [snapshot[0], {**snapshot[1], "content": DECLINED_TEXT}]


def test_an_accepted_answer_without_its_result_stays_inert() -> None:
    snapshot = [assistant(real_call(), confirm_call(TARGET_ARGS)), answer({"accepted": True})]
    assert clean_confirm_changes(snapshot, {"call_unrelated": "unrelated result"}) == snapshot


# ------------------------------------------------------------------------ and more


def test_a_result_already_in_the_snapshot_is_not_duplicated() -> None:
    snapshot = [
        assistant(real_call(), confirm_call(TARGET_ARGS)),
        result("call_target", "done"),
        answer({"accepted": True}),
    ]
    assert clean_confirm_changes(snapshot) == [
        assistant(real_call()),
        result("call_target", "done"),
    ]


def test_cleaning_is_idempotent_and_pure() -> None:
    snapshot = [
        assistant(real_call(), confirm_call(TARGET_ARGS)),
        answer({"accepted": True}),
        assistant(confirm_call(TARGET_ARGS, call_id="confirm_changes:ap2")),
        answer({"accepted": False}, call_id="confirm_changes:ap2"),
    ]
    before = copy.deepcopy(snapshot)
    once = clean_confirm_changes(snapshot, {"call_target": "r"})
    assert clean_confirm_changes(once, {"call_target": "r"}) == once
    assert snapshot == before


def test_a_tool_returning_accepted_is_left_alone() -> None:
    snapshot = [assistant(real_call("c1")), result("c1", '{"accepted": true}')]
    assert clean_confirm_changes(snapshot, {"c1": "x"}) == snapshot


def test_a_confirm_call_by_name_with_a_foreign_id_is_recognised() -> None:
    snapshot = [
        assistant(real_call(), confirm_call(TARGET_ARGS, call_id="confirm-xyz")),
        answer({"accepted": True}, call_id="confirm-xyz"),
    ]
    cleaned = clean_confirm_changes(snapshot, {"call_target": "done"})
    assert cleaned[0] == assistant(real_call())
    assert cleaned[1]["toolCallId"] == "call_target"


def test_an_answer_that_is_not_a_decision_is_left_alone() -> None:
    snapshot = [assistant(confirm_call(TARGET_ARGS)), answer({"accepted": "yes"})]
    assert clean_confirm_changes(snapshot, {"call_target": "r"}) == snapshot


def test_removing_the_only_confirm_call_keeps_a_valid_assistant_message() -> None:
    snapshot = [assistant(confirm_call(TARGET_ARGS)), answer({"accepted": True})]
    cleaned = clean_confirm_changes(snapshot, {"call_target": "r"})
    assert cleaned[0] == {"id": "a1", "role": "assistant", "content": ""}
    for message in cleaned:
        MESSAGE.validate_python(message)


# -------------------------------------------------------------- rendering a thread

CALL = ToolCallPart(call_id="call_1", name="delete_file", arguments='{"path":"/a"}')
THREAD = (
    Message(role="system", parts=(TextPart(text="Be careful."),), id="s"),
    Message(role="user", parts=(TextPart(text="Delete /a"),), id="u1"),
    Message(
        role="assistant",
        parts=(
            ReasoningPart(
                reasoning_kind="summary", text="Risky.", opaque=ENCRYPTED, item_id="rs_1"
            ),
            TextPart(text="Asking first."),
            replace(CALL, signature=SIGNATURE),
            ApprovalRequestPart(approval_id="ap1", call=CALL),
        ),
        id="a1",
    ),
    Message(role="user", parts=(ApprovalResponsePart(approval_id="ap1", approved=True),), id="d1"),
)
DONE = Message(
    role="tool",
    parts=(ToolResultPart(call_id="call_1", output=(TextPart(text="deleted"),)),),
    id="t1",
)


def render(thread: tuple[Message, ...], style: str = "confirm_changes") -> list[JsonObject]:
    rendered = messages_to_agui(thread, seal_key=KEY, tenant="acme", approval_style=style)  # type: ignore[arg-type]  # literal
    for message in rendered:
        MESSAGE.validate_python(message)
    return rendered


def test_a_pending_confirmation_renders_the_synthetic_pair() -> None:
    rendered = render(THREAD)
    assert [message["role"] for message in rendered] == [
        "system",
        "user",
        "reasoning",
        "assistant",
        "tool",
    ]
    calls = rendered[3]["toolCalls"]
    assert isinstance(calls, list) and [call["id"] for call in calls] == ["call_1", CONFIRM]  # type: ignore[index]  # JSON
    assert rendered[4] == {
        "id": f"{CONFIRM}:answer",
        "role": "tool",
        "toolCallId": CONFIRM,
        "content": '{"accepted":true}',
    }


def test_once_the_result_exists_the_confirmation_is_replaced() -> None:
    rendered = render((*THREAD, DONE))
    assert [message["role"] for message in rendered] == [
        "system",
        "user",
        "reasoning",
        "assistant",
        "tool",
    ]
    assert rendered[-1]["toolCallId"] == "call_1" and rendered[-1]["content"] == "deleted"
    assert [call["id"] for call in rendered[3]["toolCalls"]] == ["call_1"]  # type: ignore[index,union-attr]  # JSON


def test_a_rejected_confirmation_renders_declined() -> None:
    rejected = (
        *THREAD[:3],
        Message(role="user", parts=(ApprovalResponsePart(approval_id="ap1", approved=False),)),
    )
    assert render(rejected)[-1]["content"] == DECLINED_TEXT


def test_interrupt_style_renders_no_synthetic_messages() -> None:
    rendered = render(THREAD, style="interrupt")
    assert [message["role"] for message in rendered] == ["system", "user", "reasoning", "assistant"]


def test_both_ways_an_uncleaned_snapshot_decodes_to_approval_parts() -> None:
    decoded = decode_run_input(
        {"threadId": "t", "runId": "r", "messages": render(THREAD)}, seal_key=KEY, tenant="acme"
    ).messages
    assert [part.kind for part in decoded[2].parts] == [
        "reasoning",
        "text",
        "tool_call",
        "approval_request",
    ]
    (response,) = decoded[3].parts
    assert isinstance(response, ApprovalResponsePart) and response.approved


def test_both_ways_a_cleaned_snapshot_decodes_to_a_plain_call_and_result() -> None:
    decoded = decode_run_input(
        {"threadId": "t", "runId": "r", "messages": render((*THREAD, DONE))},
        seal_key=KEY,
        tenant="acme",
    ).messages
    kinds = [[part.kind for part in message.parts] for message in decoded]
    assert kinds == [["text"], ["text"], ["reasoning", "text", "tool_call"], ["tool_result"]]
    step = decoded[2]
    assert tuple(replace(part, extra={}) for part in step.parts) == THREAD[2].parts[:3]


@pytest.mark.parametrize("outcome", ["failed", "denied"])
def test_failed_results_carry_an_error(outcome: str) -> None:
    failed = Message(
        role="tool",
        parts=(ToolResultPart(call_id="c", output=(TextPart(text="nope"),), outcome=outcome),),  # type: ignore[arg-type]  # literal
        id="t",
    )
    (rendered,) = render((failed,))
    assert rendered["error"] == "nope"
    (decoded,) = decode_run_input({"threadId": "t", "runId": "r", "messages": [rendered]}).messages
    assert decoded.tool_results[0].is_error


def test_messages_without_ids_get_positional_ids() -> None:
    rendered = render(
        (
            Message(role="user", parts=(TextPart(text="a"),)),
            Message(role="user", parts=(TextPart(text="b"),)),
        )
    )
    assert [message["id"] for message in rendered] == ["msg-0", "msg-1"]

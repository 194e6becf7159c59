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
    ApprovalStyle,
    clean_confirm_changes,
    confirm_changes_call_id,
    decode_run_input,
    encode_messages,
    messages_to_agui,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    TranslationWarning,
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


@pytest.mark.parametrize("outcome", ["failed", "denied", "interrupted"])
def test_failed_results_carry_an_error_and_their_outcome(outcome: str) -> None:
    failed = Message(
        role="tool",
        parts=(ToolResultPart(call_id="c", output=(TextPart(text="nope"),), outcome=outcome),),  # type: ignore[arg-type]  # literal
        id="t",
    )
    (rendered,) = render((failed,))
    assert rendered["error"] == "nope"
    assert ("metadata" in rendered) == (outcome != "failed")
    (decoded,) = decode_run_input({"threadId": "t", "runId": "r", "messages": [rendered]}).messages
    assert decoded.tool_results[0].outcome == outcome


def test_messages_without_ids_get_positional_ids() -> None:
    rendered = render(
        (
            Message(role="user", parts=(TextPart(text="a"),)),
            Message(role="user", parts=(TextPart(text="b"),)),
        )
    )
    assert [message["id"] for message in rendered] == ["msg-0", "msg-1"]


# ------------------------------------------- what the view carries, and what it reports


def both_ways(
    thread: tuple[Message, ...], style: ApprovalStyle = "interrupt"
) -> tuple[tuple[Message, ...], tuple[TranslationWarning, ...]]:
    encoded = encode_messages(thread, seal_key=KEY, tenant="acme", approval_style=style)
    for message in encoded.messages:
        MESSAGE.validate_python(message)
    payload: JsonObject = {"threadId": "t", "runId": "r", "messages": list(encoded.messages)}
    decoded = decode_run_input(payload, seal_key=KEY, tenant="acme").messages
    return decoded, encoded.warnings


def plain(message: Message) -> tuple[Part, ...]:
    return tuple(replace(part, extra={}) for part in message.parts)


def test_a_refusal_comes_back_a_refusal() -> None:
    """Conformance openai_chat/response_refusal, openai_responses/response_refusal → agui."""
    refusal = Message(role="assistant", parts=(RefusalPart(text="I can't help with that."),))
    (rendered,) = render((refusal,), "interrupt")
    assert rendered["content"] == "I can't help with that."
    (decoded,), warnings = both_ways((refusal,))
    assert plain(decoded) == refusal.parts
    assert warnings == ()


def test_text_and_refusal_parts_keep_their_boundaries_and_signature() -> None:
    parts = (
        TextPart(text="Here is the summary. "),
        RefusalPart(text="I won't add the password."),
        TextPart(text="", signature=SIGNATURE),
    )
    (decoded,), warnings = both_ways((Message(role="assistant", parts=parts, id="a"),))
    assert plain(decoded) == parts
    assert warnings == ()


def test_raw_reasoning_keeps_its_kind_and_item_id() -> None:
    """Conformance openai_chat/request_reasoning_content_tool_turn and
    openai_responses/request_raw_reasoning_empty_summary → agui (raw came back a summary)."""
    step = Message(
        role="assistant",
        parts=(
            ReasoningPart(reasoning_kind="raw", text="91 = 7 * 13.", item_id="rs_raw1"),
            ReasoningPart(reasoning_kind="summary", text="Factoring."),
            TextPart(text="No."),
        ),
        id="a",
    )
    rendered = render((step,), "interrupt")
    assert rendered[0]["metadata"] == {"interlock": {"reasoningKind": "raw", "itemId": "rs_raw1"}}
    assert "metadata" not in rendered[1]
    (decoded,), warnings = both_ways((step,))
    assert plain(decoded) == step.parts
    assert warnings == ()


def test_hosted_items_are_reported_never_dropped_silently() -> None:
    """Conformance openai_responses/request_mcp_approval → agui."""
    hosted_call = ToolCallPart(
        call_id="mcpr_01", name="ask_question", owner="hosted", server_label="deepwiki"
    )
    thread = (
        Message(role="user", parts=(TextPart(text="Which transports?"),)),
        Message(
            role="assistant",
            parts=(
                HostedToolPart(provider="openai", item_type="mcp_list_tools", item={"id": "l"}),
                ApprovalRequestPart(approval_id="mcpr_01", call=hosted_call),
            ),
        ),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="mcpr_01", approved=True),)),
    )
    decoded, warnings = both_ways(thread)
    assert [message.role for message in decoded] == ["user"]
    assert [(warning.code, warning.location) for warning in warnings] == [
        ("hosted_tool_dropped", "messages[1].parts[0]"),
        ("hosted_approval_dropped", "messages[1].parts[1]"),
        ("hosted_approval_dropped", "messages[2].parts[0]"),
    ]


def test_a_hosted_confirmation_keeps_its_owner_and_server_label() -> None:
    call = ToolCallPart(
        call_id="mcpr_01", name="ask", arguments="{}", owner="hosted", server_label="deepwiki"
    )
    request = ApprovalRequestPart(approval_id="mcpr_01", call=call)
    decoded, warnings = both_ways(
        (Message(role="assistant", parts=(request,)),), style="confirm_changes"
    )
    (part,) = decoded[0].parts
    assert isinstance(part, ApprovalRequestPart)
    assert (part.call.owner, part.call.server_label) == ("hosted", "deepwiki")
    assert warnings == ()


def test_local_control_parts_are_not_reported() -> None:
    """They travel as interrupts and ``resume[]`` (or confirm_changes), not as messages."""
    input_request = InputRequestPart(request_id="q", occurrence_id="o", call_id="c", prompt="?")
    answer = InputResponsePart(request_id="q", value="blue")
    thread = (
        *THREAD,
        Message(role="assistant", parts=(input_request,)),
        Message(role="user", parts=(answer,)),
    )
    for style in ("interrupt", "confirm_changes"):
        assert both_ways(thread, style=style)[1] == ()  # type: ignore[arg-type]  # literal


def test_parts_agui_messages_cannot_hold_are_reported() -> None:
    thread = (
        Message(
            role="assistant",
            parts=(
                TextPart(text="chart:"),
                MediaPart(media_type="image/png", data="iVBO"),
                JsonPart(value={"rows": 3}),
            ),
        ),
        Message(role="user", parts=(ReasoningPart(reasoning_kind="raw", text="hm"),)),
        Message(role="system", parts=(MediaPart(uri="https://x/y.png"),)),
        Message(role="tool", parts=(TextPart(text="stray"),)),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="nobody", approved=True),)),
    )
    warnings = both_ways(thread)[1]
    assert [(warning.code, warning.location) for warning in warnings] == [
        ("part_dropped", "messages[0].parts[1]"),
        ("part_dropped", "messages[0].parts[2]"),
        ("part_dropped", "messages[1].parts[0]"),
        ("part_dropped", "messages[2].parts[0]"),
        ("part_dropped", "messages[3].parts[0]"),
        ("approval_dropped", "messages[4].parts[0]"),
    ]


def test_a_step_shown_in_another_order_is_reported() -> None:
    step = Message(
        role="assistant",
        parts=(
            TextPart(text="Let me think."),
            ReasoningPart(reasoning_kind="raw", text="hm"),
            replace(CALL, call_id="c1"),
            TextPart(text="Done."),
        ),
    )
    (decoded,), warnings = both_ways((step,))
    assert [part.kind for part in decoded.parts] == ["reasoning", "text", "text", "tool_call"]
    assert [(warning.code, warning.location) for warning in warnings] == [
        ("parts_reordered", "messages[0].parts[1]"),
        ("parts_reordered", "messages[0].parts[3]"),
    ]


@pytest.mark.parametrize("role", ["user", "system", "developer"])
def test_several_text_parts_stay_separate(role: str) -> None:
    parts = (TextPart(text="First."), TextPart(text=" Second."))
    (decoded,), warnings = both_ways((Message(role=role, parts=parts),))  # type: ignore[arg-type]  # literal
    assert plain(decoded) == parts
    assert warnings == ()


def test_messages_to_agui_is_encode_messages_without_the_warnings() -> None:
    thread = (*THREAD, DONE)
    encoded = encode_messages(thread, seal_key=KEY, tenant="acme")
    assert messages_to_agui(thread, seal_key=KEY, tenant="acme") == encoded.messages

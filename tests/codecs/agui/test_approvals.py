"""Interrupt shapes out, resume entries in."""

from __future__ import annotations

import json

import pytest
from ag_ui.core import Interrupt, ResumeEntry

from interlock.codecs.agui import APPROVAL_RESPONSE_SCHEMA
from interlock.codecs.agui._approvals import (
    approval_interrupt,
    confirm_changes_arguments,
    decode_resume_entry,
    input_interrupt,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    InputRequestPart,
    InputResponsePart,
    ToolCallPart,
)

CALL = ToolCallPart(call_id="call_1", name="delete_file", arguments='{"path": "/a"}')


def test_approval_interrupt_is_a_valid_tool_call_interrupt() -> None:
    interrupt = approval_interrupt(ApprovalRequestPart(approval_id="ap1", call=CALL))
    Interrupt.model_validate(interrupt)
    assert interrupt["id"] == "approval:ap1"
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == "call_1"
    schema = interrupt["responseSchema"]
    assert schema == APPROVAL_RESPONSE_SCHEMA
    properties = APPROVAL_RESPONSE_SCHEMA["properties"]
    assert isinstance(properties, dict) and {"approved", "editedArgs"} <= set(properties)
    assert APPROVAL_RESPONSE_SCHEMA["required"] == ["approved"]


def test_input_interrupt_carries_the_request_schema() -> None:
    schema = {"type": "object", "properties": {"color": {"type": "string"}}}
    request = InputRequestPart(
        request_id="q1",
        occurrence_id="occ_1",
        call_id="call_2",
        prompt="Color?",
        response_schema=schema,
    )
    interrupt = input_interrupt(request)
    Interrupt.model_validate(interrupt)
    assert interrupt == {
        "id": "input:q1",
        "reason": "input_required",
        "message": "Color?",
        "toolCallId": "call_2",
        "responseSchema": schema,
    }


def test_input_interrupt_without_schema_omits_the_key() -> None:
    request = InputRequestPart(request_id="q", occurrence_id="o", call_id="c", prompt="?")
    assert "responseSchema" not in input_interrupt(request)


def test_confirm_changes_arguments_name_function_call_and_arguments() -> None:
    assert json.loads(confirm_changes_arguments(CALL)) == {
        "function_name": "delete_file",
        "function_call_id": "call_1",
        "function_arguments": {"path": "/a"},
    }


def test_confirm_changes_arguments_keep_unparsable_text_as_is() -> None:
    broken = ToolCallPart(call_id="c", name="f", arguments="{oops")
    assert json.loads(confirm_changes_arguments(broken))["function_arguments"] == "{oops"


def entry(**fields: object) -> ResumeEntry:
    return ResumeEntry.model_validate(fields)


def test_approve_with_edits() -> None:
    part = decode_resume_entry(
        entry(
            interruptId="approval:ap1",
            status="resolved",
            payload={"approved": True, "editedArgs": {"path": "/b"}, "reason": "ok"},
        ),
        "resume[0]",
    )
    assert part == ApprovalResponsePart(
        approval_id="ap1",
        approved=True,
        reason="ok",
        edited_arguments='{"path":"/b"}',
        extra={"agui": {"status": "resolved"}},
    )


def test_reject() -> None:
    part = decode_resume_entry(
        entry(interruptId="approval:ap1", status="resolved", payload={"approved": False}), "r"
    )
    assert isinstance(part, ApprovalResponsePart) and part.approved is False


def test_cancelled_approval_is_a_refusal_that_says_so() -> None:
    part = decode_resume_entry(
        entry(interruptId="approval:ap1", status="cancelled", payload={"approved": True}), "r"
    )
    assert isinstance(part, ApprovalResponsePart)
    assert (part.approved, part.reason) == (False, "cancelled")


@pytest.mark.parametrize(("status", "value"), [("resolved", {"a": 1}), ("cancelled", None)])
def test_input_answers(status: str, value: object) -> None:
    part = decode_resume_entry(
        entry(interruptId="input:q1", status=status, payload={"a": 1}, metadata={"k": "v"}), "r"
    )
    assert isinstance(part, InputResponsePart)
    assert (part.request_id, part.value) == ("q1", value)
    assert part.extra["agui"] == {"status": status, "metadata": {"k": "v"}}


def test_unknown_payload_keys_are_refused() -> None:
    with pytest.raises(DecodeError) as raised:
        decode_resume_entry(
            entry(interruptId="approval:a", status="resolved", payload={"approved": True, "x": 1}),
            "resume[2]",
        )
    assert raised.value.path == "resume[2].payload.x"


def test_reason_must_be_text() -> None:
    with pytest.raises(DecodeError) as raised:
        decode_resume_entry(
            entry(
                interruptId="approval:a",
                status="resolved",
                payload={"approved": False, "reason": 3},
            ),
            "resume[0]",
        )
    assert raised.value.path == "resume[0].payload.reason"


@pytest.mark.parametrize("scope", ["tool", "arguments"])
def test_an_approval_may_be_remembered(scope: str) -> None:
    part = decode_resume_entry(
        entry(
            interruptId="approval:ap1",
            status="resolved",
            payload={"approved": True, "remember": scope},
        ),
        "resume[0]",
    )
    assert isinstance(part, ApprovalResponsePart) and part.remember == scope


@pytest.mark.parametrize(
    "payload",
    [{"approved": False, "remember": "tool"}, {"approved": True, "remember": "forever"}],
    ids=["rejection", "unknown-scope"],
)
def test_remember_is_refused_on_a_rejection_or_an_unknown_scope(payload: dict[str, object]) -> None:
    with pytest.raises(DecodeError) as raised:
        decode_resume_entry(
            entry(interruptId="approval:a", status="resolved", payload=payload), "resume[1]"
        )
    assert raised.value.path == "resume[1].payload.remember"

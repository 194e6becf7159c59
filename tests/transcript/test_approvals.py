"""Approval ids split by the owner of the call they ask about."""

from __future__ import annotations

from interlock.transcript import (
    ApprovalIds,
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    ToolCallPart,
)


def test_requests_are_split_by_call_owner_and_decisions_do_not_count() -> None:
    hosted = ToolCallPart(call_id="m1", name="search", owner="hosted", server_label="wiki")
    local = ToolCallPart(call_id="c1", name="delete_file")
    messages = (
        Message(
            role="assistant",
            parts=(
                ApprovalRequestPart(approval_id="mcpr_1", call=hosted),
                ApprovalRequestPart(approval_id="ap_1", call=local),
            ),
        ),
        Message(role="user", parts=(ApprovalResponsePart(approval_id="stray", approved=True),)),
    )
    assert ApprovalIds.of(messages) == ApprovalIds(
        hosted=frozenset({"mcpr_1"}), local=frozenset({"ap_1"})
    )
    assert ApprovalIds.of(()) == ApprovalIds()

"""A stored thread as a reloaded page needs it: snapshots plus what is waiting for the user.

:func:`thread_view` is the body of ``GET /agui/{agent}/threads/{threadId}``: the events a
run would end with (``STATE_SNAPSHOT`` when there is state, ``MESSAGES_SNAPSHOT``
windowed like a run's), the open interrupts in the form ``RUN_FINISHED.outcome`` gave
them, and the tool calls waiting for the client (frontend tools, ``confirm_changes``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from interlock.codecs.agui._approvals import approval_interrupt, input_interrupt
from interlock.codecs.agui._encoder import ApprovalStyle
from interlock.codecs.agui._ids import approval_interrupt_id, input_interrupt_id
from interlock.codecs.agui._labels import LABEL_KEY
from interlock.codecs.agui._snapshot import messages_to_agui
from interlock.codecs.agui._window import SNAPSHOT_LIMIT, window_messages
from interlock.transcript import (
    ApprovalRequestPart,
    InputRequestPart,
    JsonObject,
    JsonValue,
    Message,
)


def open_interrupts(
    messages: Sequence[Message], pending: Collection[str], fixed_tools: Collection[str] = ()
) -> list[JsonObject]:
    """The AG-UI interrupts among ``pending`` (interrupt ids), as the run surfaced them
    (``fixed_tools``: as the encoder's, approvals without ``editedArgs``)."""
    found: list[JsonObject] = []
    for message in messages:
        for part in message.parts:
            if (
                isinstance(part, ApprovalRequestPart)
                and approval_interrupt_id(part.approval_id) in pending
            ):
                found.append(approval_interrupt(part, editable=part.call.name not in fixed_tools))
            elif (
                isinstance(part, InputRequestPart)
                and input_interrupt_id(part.request_id) in pending
            ):
                found.append(input_interrupt(part))
    return found


def thread_view(
    messages: Sequence[Message],
    *,
    state: JsonValue,
    pending: Collection[str],
    waiting_calls: Sequence[str],
    seal_key: bytes | None,
    tenant: str,
    approval_style: ApprovalStyle,
    limit: int = SNAPSHOT_LIMIT,
    fixed_tools: Collection[str] = (),
) -> JsonObject:
    """``{"events", "interrupts", "pendingToolCallIds"}`` (module docstring).

    ``pending`` are the thread's pending interrupt ids; ``waiting_calls`` the call ids
    the client owes an answer (frontend tool calls, ``confirm_changes`` calls).
    """
    rendered = messages_to_agui(
        messages, seal_key=seal_key, tenant=tenant, approval_style=approval_style
    )
    window, omitted = window_messages(rendered, limit)
    events: list[JsonValue] = []
    if state is not None:
        events.append({"type": "STATE_SNAPSHOT", "snapshot": state})
    snapshot: JsonObject = {"type": "MESSAGES_SNAPSHOT", "messages": list[JsonValue](window)}
    if omitted:
        snapshot["metadata"] = {LABEL_KEY: {"omittedMessages": omitted}}
    events.append(snapshot)
    interrupts: list[JsonValue] = list(open_interrupts(messages, pending, fixed_tools))
    return {
        "events": events,
        "interrupts": interrupts,
        "pendingToolCallIds": list[JsonValue](waiting_calls),
    }

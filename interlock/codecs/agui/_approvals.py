"""Approvals and input requests in both AG-UI styles, both directions.

Outbound, an :class:`ApprovalRequestPart` becomes either an interrupt (``reason
"tool_call"``, answered by ``resume[]``) or a synthetic ``confirm_changes`` tool call
(answered by a tool message ``{"accepted": bool}``); an :class:`InputRequestPart` is
always an interrupt (``reason "input_required"``). Inbound, the answers become
:class:`ApprovalResponsePart` / :class:`InputResponsePart`. Which request an answer is
for comes from the id alone (see ``_ids``); the gateway's ledger decides whether it is
live and whether the recorded call matches.
"""

from __future__ import annotations

import json
from typing import cast

from ag_ui.core import ResumeEntry

from interlock.codecs.agui._ids import (
    approval_interrupt_id,
    input_interrupt_id,
    parse_interrupt_id,
)
from interlock.codecs.agui._wire import DIALECT, compact_json, without_none
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonValue,
    ToolCallPart,
)

APPROVAL_RESPONSE_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "Whether the tool call may run."},
        "editedArgs": {
            "type": "object",
            "description": "Replacement arguments (all of them); only with approved: true.",
        },
        "reason": {"type": "string", "description": "Why, shown to the model on rejection."},
        "remember": {
            "type": "string",
            "enum": ["tool", "arguments"],
            "description": (
                "Only with approved: true. Approve later calls in this thread without asking:"
                " every call of this tool, or calls with exactly these arguments."
            ),
        },
    },
    "required": ["approved"],
    "additionalProperties": False,
}
"""The ``responseSchema`` of every tool-approval interrupt."""

FIXED_APPROVAL_RESPONSE_SCHEMA: JsonObject = {
    **APPROVAL_RESPONSE_SCHEMA,
    "properties": {
        key: value
        for key, value in cast(JsonObject, APPROVAL_RESPONSE_SCHEMA["properties"]).items()
        if key != "editedArgs"
    },
}
"""The ``responseSchema`` of an approval whose arguments may not be edited."""

_APPROVAL_KEYS = frozenset({"approved", "editedArgs", "reason", "remember"})
_REMEMBER = ("tool", "arguments")


def approval_interrupt(part: ApprovalRequestPart, *, editable: bool = True) -> JsonObject:
    """The AG-UI ``Interrupt`` for an approval request (style ``interrupt``); without
    ``editable`` its ``responseSchema`` offers no ``editedArgs``."""
    schema = APPROVAL_RESPONSE_SCHEMA if editable else FIXED_APPROVAL_RESPONSE_SCHEMA
    return {
        "id": approval_interrupt_id(part.approval_id),
        "reason": "tool_call",
        "message": f"Approve running {part.call.name}?",
        "toolCallId": part.call.call_id,
        "responseSchema": schema,
    }


def input_interrupt(part: InputRequestPart) -> JsonObject:
    """The AG-UI ``Interrupt`` for a tool's request for user input."""
    return without_none(
        {
            "id": input_interrupt_id(part.request_id),
            "reason": "input_required",
            "message": part.prompt,
            "toolCallId": part.call_id,
            "responseSchema": part.response_schema,
        }
    )


def confirm_changes_arguments(call: ToolCallPart) -> str:
    """The arguments of the synthetic ``confirm_changes`` call that surfaces ``call``.

    ``function_arguments`` is the parsed argument object, or the original text when it
    is not valid JSON (shown as is, never guessed at).
    """
    try:
        arguments: JsonValue = call.parsed_arguments
    except ValueError:
        arguments = call.arguments
    return compact_json(
        {
            "function_name": call.name,
            "function_call_id": call.call_id,
            "function_arguments": arguments,
        }
    )


def decode_resume_entry(entry: ResumeEntry, path: str) -> ApprovalResponsePart | InputResponsePart:
    """One ``resume[]`` entry as the control part it answers; raises :class:`DecodeError`.

    A ``cancelled`` status is a refusal for an approval (``reason="cancelled"``) and a
    ``None`` value for an input request; either way ``extra["agui"]["status"]`` keeps it.
    """
    parsed = parse_interrupt_id(entry.interrupt_id)
    if parsed is None:
        raise DecodeError(f"{path}.interruptId", f"unknown interrupt id {entry.interrupt_id!r}")
    kind, inner = parsed
    own = without_none({"status": entry.status, "metadata": cast(JsonValue, entry.metadata)})
    payload = cast(JsonValue, entry.payload)
    if kind == "input":
        value = payload if entry.status == "resolved" else None
        return InputResponsePart(request_id=inner, value=value, extra={DIALECT: own})
    if entry.status == "cancelled":
        return ApprovalResponsePart(
            approval_id=inner, approved=False, reason="cancelled", extra={DIALECT: own}
        )
    return _approval_from_payload(inner, payload, f"{path}.payload", own)


def _approval_from_payload(
    approval_id: str, payload: JsonValue, path: str, own: JsonObject
) -> ApprovalResponsePart:
    if not isinstance(payload, dict):
        raise DecodeError(path, 'an approval answer is an object {"approved": bool}')
    unknown = sorted(set(payload) - _APPROVAL_KEYS)
    if unknown:
        raise DecodeError(f"{path}.{unknown[0]}", "not part of the approval response schema")
    approved = payload.get("approved")
    if not isinstance(approved, bool):
        raise DecodeError(f"{path}.approved", "required, and must be a boolean")
    reason = payload.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise DecodeError(f"{path}.reason", "must be a string")
    edited = payload.get("editedArgs")
    if edited is not None and not isinstance(edited, dict):
        raise DecodeError(
            f"{path}.editedArgs", "must be an object (the full replacement arguments)"
        )
    if edited is not None and not approved:
        raise DecodeError(f"{path}.editedArgs", "edits are only meaningful with approved: true")
    remember = payload.get("remember")
    if remember is not None and (remember not in _REMEMBER or not approved):
        raise DecodeError(f"{path}.remember", '"tool" or "arguments", and only with approved: true')
    return ApprovalResponsePart(
        approval_id=approval_id,
        approved=approved,
        reason=reason,
        edited_arguments=compact_json(edited) if edited is not None else None,
        remember="tool" if remember == "tool" else "arguments" if remember else None,
        extra={DIALECT: own},
    )


def decode_confirm_answer(
    approval_id: str, content: str, path: str, own: JsonObject
) -> ApprovalResponsePart:
    """A tool message answering a synthetic ``confirm_changes`` call.

    The content must be a JSON object with a boolean ``accepted``. The whole payload is
    kept in ``extra["agui"]["payload"]`` so the ledger can compare an echoed
    ``function_call_id`` / ``function_arguments`` with its record; edits are never taken
    from this path (only an interrupt's ``editedArgs`` edits a call).
    """
    try:
        payload = json.loads(content)
    except ValueError as error:
        raise DecodeError(path, 'a confirm_changes answer is JSON {"accepted": bool}') from error
    if not isinstance(payload, dict):
        raise DecodeError(path, 'a confirm_changes answer is JSON {"accepted": bool}')
    answer = cast(JsonObject, payload)
    accepted = answer.get("accepted")
    if not isinstance(accepted, bool):
        raise DecodeError(f"{path}.accepted", "required, and must be a boolean")
    return ApprovalResponsePart(
        approval_id=approval_id, approved=accepted, extra={DIALECT: {**own, "payload": answer}}
    )

"""The codec's wire-id scheme for control-plane entities.

Interrupt ids and synthetic ``confirm_changes`` call ids carry the kind of what they
answer, so an inbound ``resume[]`` entry or tool message is classified by its id alone,
never by the shape of its payload (a tool that happens to return ``{"accepted": …}`` is
not an approval). The ids say *which* approval or input request an answer is for; whether
that request is live is for the gateway's ledger to decide.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

InterruptKind: TypeAlias = Literal["approval", "input"]

APPROVAL_INTERRUPT_PREFIX = "approval:"
INPUT_INTERRUPT_PREFIX = "input:"
CONFIRM_CHANGES_PREFIX = "confirm_changes:"
CONFIRM_CHANGES_TOOL = "confirm_changes"
"""The tool name CopilotKit-style frontends render as a confirmation dialog."""


def approval_interrupt_id(approval_id: str) -> str:
    """The AG-UI interrupt id that surfaces approval ``approval_id``."""
    return APPROVAL_INTERRUPT_PREFIX + approval_id


def input_interrupt_id(request_id: str) -> str:
    """The AG-UI interrupt id that surfaces input request ``request_id``."""
    return INPUT_INTERRUPT_PREFIX + request_id


def confirm_changes_call_id(approval_id: str) -> str:
    """The id of the synthetic ``confirm_changes`` call that surfaces ``approval_id``."""
    return CONFIRM_CHANGES_PREFIX + approval_id


def parse_interrupt_id(interrupt_id: str) -> tuple[InterruptKind, str] | None:
    """``(kind, approval or request id)`` for an id this codec issued, else ``None``."""
    if interrupt_id.startswith(APPROVAL_INTERRUPT_PREFIX):
        inner = interrupt_id[len(APPROVAL_INTERRUPT_PREFIX) :]
        return ("approval", inner) if inner else None
    if interrupt_id.startswith(INPUT_INTERRUPT_PREFIX):
        inner = interrupt_id[len(INPUT_INTERRUPT_PREFIX) :]
        return ("input", inner) if inner else None
    return None


def parse_confirm_changes_call_id(tool_call_id: str) -> str | None:
    """The approval id behind a synthetic ``confirm_changes`` call id, else ``None``."""
    if tool_call_id.startswith(CONFIRM_CHANGES_PREFIX):
        return tool_call_id[len(CONFIRM_CHANGES_PREFIX) :] or None
    return None

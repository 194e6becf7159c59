"""The codec's wire-id scheme for control-plane entities.

Interrupt ids and synthetic ``confirm_changes`` call ids carry the kind of what they
answer, so an inbound ``resume[]`` entry or tool message is classified by its id alone,
never by the shape of its payload (a tool that happens to return ``{"accepted": …}`` is
not an approval). The ids say *which* approval or input request an answer is for; whether
that request is live is for the gateway's ledger to decide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal, TypeAlias

from interlock.codecs.agui._wire import DIALECT
from interlock.transcript import JsonObject, Message, Part, ToolResultPart

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


def derived_base(message_id: str) -> str | None:
    """The stored id an AG-UI message id was derived from (``{base}:{a|r|s|t}{n}``), if any.

    Derived ids name parts of a stored message as the encoder streams them (reasoning
    messages, extra tool results, a signed assistant text split off); a client that holds
    one holds a view of ``base``, never a message of its own.
    """
    base, separator, suffix = message_id.rpartition(":")
    if not separator or not base or not suffix:
        return None
    label, digits = suffix[0], suffix[1:]
    if label in "arst" and digits.isdigit():
        return base
    return None


def stamp_result_ids(
    messages: Sequence[Message], result_ids: Mapping[tuple[str, str], str]
) -> tuple[Message, ...]:
    """``messages`` with each tool result's streamed message id recorded in its ``extra``.

    ``result_ids`` is :attr:`AguiEventEncoder.result_message_ids`; a snapshot then shows
    each result under the id it was streamed with.
    """
    stamped: list[Message] = []
    for message in messages:
        if message.id is None or message.role != "tool":
            stamped.append(message)
            continue
        parts: list[Part] = []
        for part in message.parts:
            wire_id = (
                result_ids.get((message.id, part.call_id))
                if isinstance(part, ToolResultPart)
                else None
            )
            if wire_id is None or not isinstance(part, ToolResultPart):
                parts.append(part)
                continue
            own: JsonObject = {**part.extra.get(DIALECT, {}), "messageId": wire_id}
            parts.append(replace(part, extra={**part.extra, DIALECT: own}))
        stamped.append(replace(message, parts=tuple(parts)))
    return tuple(stamped)


def held_message_ids(messages: Sequence[Message]) -> set[str]:
    """Every AG-UI message id a snapshot of ``messages`` can show for them (derived ids aside)."""
    held: set[str] = set()
    for message in messages:
        if message.id is not None:
            held.add(message.id)
        for part in message.parts:
            own = part.extra.get(DIALECT, {}).get("messageId")
            if isinstance(own, str):
                held.add(own)
    return held

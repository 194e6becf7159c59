"""Occurrence ids: the framework's identity for one logical tool call.

Provider ``call_id`` values are reused across turns, so a call and its result are paired
by *occurrence*, in transcript order: a result closes the earliest open occurrence with
its ``call_id``.
"""

from __future__ import annotations

import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import replace

from interlock.transcript._messages import Message
from interlock.transcript._parts import Part, ToolCallPart, ToolResultPart


def new_occurrence_id() -> str:
    """A fresh occurrence id, unique forever."""
    return f"occ_{uuid.uuid4().hex}"


def assign_occurrences(
    messages: Sequence[Message], mint: Callable[[], str] = new_occurrence_id
) -> tuple[Message, ...]:
    """Give every tool call and result without one an occurrence id, pairing by order.

    Calls keep an id they already have; a result without one takes the id of the earliest
    still-open call with its ``call_id``. A result whose call is unknown gets a fresh id
    (it stays an orphan; validators downstream report it). Runs in linear time.
    """
    open_calls: defaultdict[str, deque[str]] = defaultdict(deque)
    out: list[Message] = []
    for message in messages:
        parts: list[Part] = []
        changed = False
        for part in message.parts:
            new_part: Part = part
            if isinstance(part, ToolCallPart):
                occurrence = part.occurrence_id or mint()
                open_calls[part.call_id].append(occurrence)
                if occurrence != part.occurrence_id:
                    new_part = replace(part, occurrence_id=occurrence)
            elif isinstance(part, ToolResultPart):
                pending = open_calls.get(part.call_id)
                if part.occurrence_id is not None:
                    if pending and part.occurrence_id in pending:
                        pending.remove(part.occurrence_id)
                else:
                    occurrence = pending.popleft() if pending else mint()
                    new_part = replace(part, occurrence_id=occurrence)
            changed = changed or new_part is not part
            parts.append(new_part)
        out.append(replace(message, parts=tuple(parts)) if changed else message)
    return tuple(out)

"""Tool-call / tool-message pairing, checked on wire messages (provider-wire.md §2.4).

After an assistant message with tool calls, the messages that follow must be ``tool``
messages answering exactly those ids (any order), with nothing interleaved; a ``tool``
message anywhere else is an orphan. The encoder runs this before returning a payload;
the emulator runs it to answer with OpenAI's own error strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from interlock.transcript import JsonValue


@dataclass(frozen=True, slots=True)
class PairingViolation:
    """The first pairing rule a message list breaks.

    ``index`` is the offending wire message: the orphan ``tool`` message, or the
    assistant message whose ``call_ids`` got no answer.
    """

    kind: Literal["orphan_tool_message", "missing_tool_results"]
    index: int
    call_ids: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """OpenAI's own error message for this violation (its spelling, "preceeding")."""
        if self.kind == "orphan_tool_message":
            return (
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'."
            )
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(self.call_ids)}"
        )

    @property
    def param(self) -> str:
        """OpenAI's ``param`` for this violation."""
        return f"messages.[{self.index}].role"


def find_pairing_violation(messages: Sequence[JsonValue]) -> PairingViolation | None:
    """The first violation in wire ``messages``, or ``None`` when every call is answered."""
    position = 0
    while position < len(messages):
        message = messages[position]
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            return PairingViolation(kind="orphan_tool_message", index=position)
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        position += 1
        if role != "assistant" or not isinstance(calls, list) or not calls:
            continue
        pending = [_call_id(call) for call in calls]
        start = position - 1
        while position < len(messages) and _role(messages[position]) == "tool":
            answered = _tool_call_id(messages[position])
            if answered not in pending:
                return PairingViolation(kind="orphan_tool_message", index=position)
            pending.remove(answered)
            position += 1
        if pending:
            return PairingViolation(
                kind="missing_tool_results", index=start, call_ids=tuple(pending)
            )
    return None


def _role(message: JsonValue) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _call_id(call: JsonValue) -> str:
    value = call.get("id") if isinstance(call, dict) else None
    return value if isinstance(value, str) else ""


def _tool_call_id(message: JsonValue) -> str | None:
    value = message.get("tool_call_id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None

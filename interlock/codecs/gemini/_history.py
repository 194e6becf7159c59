"""Canonical messages → ``systemInstruction`` + ``contents[]``, with Gemini's turn rules.

* Leading ``system``/``developer`` messages become the one ``systemInstruction`` (their
  parts kept one by one; a developer message is reported with ``developer_as_system``).
  A system or developer message *after* the conversation started has no Gemini place:
  ``strict`` refuses it (``LossyHistoryError`` at ``messages[i]``); ``degrade`` appends it
  to the ``systemInstruction`` and reports ``system_moved``.
* ``assistant`` → a ``model`` content; ``user`` and ``tool`` → ``user`` contents.
  Consecutive tool messages are grouped into one function-response turn (§3.7, trap 21).
* The current turn (everything after the last user content holding more than function
  responses, provider-wire.md §3.4 rule 3) needs a thought signature on each step's first
  ``functionCall``. A missing one raises ``LossyHistoryError`` naming
  ``messages[i].parts[j]`` in ``strict`` mode; ``degrade`` sends
  ``policy.gemini_dummy_signature`` (literal string by default, or its base64 form) and
  reports ``dummy_signature``. Gemini 2.x upstreams may switch the check off.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Literal

from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._wire import DIALECT, object_entry
from interlock.transcript import JsonObject, JsonValue, LossyHistoryError, Message, ReplayPolicy

DummyForm = Literal["literal", "base64"]


@dataclass(slots=True)
class _Turn:
    """One wire content being built, plus what the signature check needs to know."""

    role: str
    wire: JsonObject
    parts: list[JsonValue]
    plain: bool = False
    first_call: tuple[int, int, int] | None = None


def encode_history(
    messages: tuple[Message, ...],
    encoder: PartEncoder,
    policy: ReplayPolicy,
    *,
    require_signatures: bool,
    dummy_form: DummyForm,
) -> tuple[JsonObject | None, list[JsonValue]]:
    """``(systemInstruction, contents)`` for ``messages``; raises before anything is sent."""
    system: JsonObject | None = None
    turns: list[_Turn] = []
    previous_tool = False
    for index, message in enumerate(messages):
        if message.role in ("system", "developer"):
            system = _instruction(system, message, index, bool(turns), encoder, policy)
            continue
        turn = _encode_message(message, index, encoder)
        is_tool = message.role == "tool"
        if turn is not None:
            boundary = message.extra.get(DIALECT, {}).get("content")
            merge = boundary == "continue" or (boundary != "new" and is_tool and previous_tool)
            if merge and turns and turns[-1].role == turn.role:
                _append(turns[-1], turn)
            else:
                turns.append(turn)
        previous_tool = is_tool
    if require_signatures:
        _check_signatures(turns, encoder, policy, dummy_form)
    return system, [turn.wire for turn in turns]


def _encode_message(message: Message, index: int, encoder: PartEncoder) -> _Turn | None:
    role = "model" if message.role == "assistant" else "user"
    own = message.extra.get(DIALECT, {})
    wire: JsonObject = dict(object_entry(own, "fields"))
    parts: list[JsonValue] = []
    turn = _Turn(role=role, wire=wire, parts=parts)
    for position, part in enumerate(message.parts):
        encoded = encoder.encode(part, index, position)
        if encoded is None:
            continue
        if "functionResponse" not in encoded:
            turn.plain = True
            if turn.first_call is None and "functionCall" in encoded:
                turn.first_call = (len(parts), index, position)
        parts.append(encoded)
    if message.parts and not parts:
        return None
    if own.get("noRole"):
        pass
    elif isinstance(own.get("role"), str):
        wire["role"] = own["role"]
    else:
        wire["role"] = role
    if not (own.get("noParts") and not parts):
        wire["parts"] = parts
    return turn


def _append(target: _Turn, turn: _Turn) -> None:
    if target.first_call is None and turn.first_call is not None:
        offset, message, position = turn.first_call
        target.first_call = (offset + len(target.parts), message, position)
    target.plain = target.plain or turn.plain
    target.parts.extend(turn.parts)


def _instruction(
    system: JsonObject | None,
    message: Message,
    index: int,
    started: bool,
    encoder: PartEncoder,
    policy: ReplayPolicy,
) -> JsonObject:
    location = f"messages[{index}]"
    if started:
        if policy.mode == "strict":
            raise LossyHistoryError(
                location,
                f"a {message.role} message after the conversation started has no place in "
                "Gemini (one leading systemInstruction only)",
                code="misplaced_system",
            )
        encoder.warn(
            "system_moved",
            location,
            f"mid-conversation {message.role} message moved into the systemInstruction",
        )
    elif message.role == "developer":
        encoder.warn(
            "developer_as_system",
            location,
            "Gemini has no developer role; the message is sent in the systemInstruction",
        )
    if system is None:
        own = message.extra.get(DIALECT, {})
        system = dict(object_entry(own, "fields"))
        if not own.get("noParts") or message.parts:
            system["parts"] = []
    parts = system.setdefault("parts", [])
    assert isinstance(parts, list)
    for position, part in enumerate(message.parts):
        encoded = encoder.encode(part, index, position)
        if encoded is not None:
            parts.append(encoded)
    return system


def _current_turn_start(turns: list[_Turn]) -> int:
    for position in range(len(turns) - 1, -1, -1):
        turn = turns[position]
        if turn.role == "user" and turn.plain:
            return position + 1
    return 0


def _check_signatures(
    turns: list[_Turn], encoder: PartEncoder, policy: ReplayPolicy, dummy_form: DummyForm
) -> None:
    for turn in turns[_current_turn_start(turns) :]:
        if turn.role != "model" or turn.first_call is None:
            continue
        offset, message, position = turn.first_call
        part = turn.parts[offset]
        assert isinstance(part, dict)
        call = part.get("functionCall")
        if "thoughtSignature" in part or (isinstance(call, dict) and "thoughtSignature" in call):
            continue
        location = encoder.location(message, position)
        if policy.mode == "strict":
            raise LossyHistoryError(
                location,
                "this function call is in the current turn and has no Gemini thought "
                "signature; Gemini 3 rejects it (400). Replay the signature the model "
                "returned, or opt in to the documented dummy with ReplayPolicy(mode='degrade')",
                code="missing_signature",
            )
        dummy = policy.gemini_dummy_signature
        if dummy_form == "base64":
            dummy = base64.b64encode(dummy.encode()).decode()
        part["thoughtSignature"] = dummy
        encoder.warn(
            "dummy_signature",
            location,
            f"current-turn function call had no Gemini signature; sent the dummy {dummy!r}",
        )

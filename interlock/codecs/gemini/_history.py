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
from typing import Literal

from interlock.codecs._json import loads
from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._results import response_object
from interlock.codecs.gemini._wire import DIALECT, is_signature, object_entry
from interlock.transcript import (
    JsonObject,
    JsonValue,
    LossyHistoryError,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    ReplayPolicy,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

DummyForm = Literal["literal", "base64"]


class _Turn:
    """One wire content being built, plus what the signature check needs to know: whether
    it holds more than function responses (``plain``), and where its first call is (offset
    in ``parts``, message, part)."""

    __slots__ = ("first_call", "parts", "plain", "role", "wire")

    def __init__(self, role: str, wire: JsonObject, parts: list[JsonValue]) -> None:
        self.role = role
        self.wire = wire
        self.parts = parts
        self.plain = False
        self.first_call: tuple[int, int, int] | None = None


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
    fast = encoder.for_request
    for index, message in enumerate(messages):
        if message.role in ("system", "developer"):
            system = _instruction(system, message, index, bool(turns), encoder, policy)
            continue
        turn = plain_turn(message, index, encoder) if fast else None
        if turn is None:
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


_WIRE_ROLES = {"user": "user", "tool": "user", "assistant": "model"}
_DROPPED: JsonObject = {}
"""What :func:`_plain_wire` gives for reasoning a request does not send (by identity)."""


def plain_turn(message: Message, index: int, encoder: PartEncoder) -> _Turn | None:
    """The content for a message of the commonest parts, built directly: plain text (no
    citations, no Gemini fields kept, signed by Gemini or not), local calls with object
    arguments, results of at most one text or JSON output (none after a call of the same
    message), and reasoning of another provider without an opaque payload (not sent:
    ``reasoning_dropped`` when it has text). ``None`` for any other message (or one with
    Gemini marks, or nothing sent), which :func:`_encode_message` then encodes. Equal to
    what it gives, warnings and the encoder's call names and minted ids included; nothing
    is recorded unless the whole message is taken."""
    role = _WIRE_ROLES.get(message.role)
    if role is None or message.extra.get(DIALECT):
        return None
    parts: list[JsonValue] = []
    turn = _Turn(role, {"role": role, "parts": parts}, parts)
    later: list[tuple[int, ToolCallPart | ReasoningPart]] = []
    for position, part in enumerate(message.parts):
        if (
            isinstance(part, TextPart)
            and part.signature is None
            and not part.citations
            and not part.extra.get(DIALECT)
        ):
            turn.plain = True
            parts.append({"text": part.text})
            continue
        wire = _plain_wire(part, encoder, bool(later))
        if wire is None:
            return None
        if isinstance(part, ToolCallPart | ReasoningPart):
            later.append((position, part))
            if wire is _DROPPED:
                continue
            if turn.first_call is None:
                turn.first_call = (len(parts), index, position)
        turn.plain = turn.plain or "functionResponse" not in wire
        parts.append(wire)
    if not parts:
        return None
    if later:
        _record(later, index, encoder)
    return turn


def _plain_wire(part: Part, encoder: PartEncoder, after_call: bool) -> JsonObject | None:
    """The wire part :func:`plain_turn` takes ``part`` as (:data:`_DROPPED` for reasoning
    not sent), or ``None``; the encoder is only read."""
    if isinstance(part, TextPart):
        if part.citations or part.extra.get(DIALECT):
            return None
        return _signed({"text": part.text}, part.signature)
    if isinstance(part, ToolCallPart):
        return _plain_call(part)
    if isinstance(part, ToolResultPart):
        return None if after_call else _plain_result(part, encoder)
    if isinstance(part, ReasoningPart) and part.extra.get(DIALECT) is None:
        return _DROPPED if part.opaque is None else None
    return None


def _record(
    later: list[tuple[int, ToolCallPart | ReasoningPart]], index: int, encoder: PartEncoder
) -> None:
    """What the general path records for these parts, in order: a call's name and minted
    id, the warning for reasoning with text that is not sent."""
    for position, part in later:
        if isinstance(part, ToolCallPart):
            if part.extra.get(DIALECT):
                encoder.minted_ids.add(part.call_id)
            encoder.call_names[part.call_id] = part.name
        elif part.text:
            encoder.warn(
                "reasoning_dropped",
                encoder.location(index, position),
                f"{part.reasoning_kind} reasoning from another provider is not sent to "
                "Gemini as a thought",
            )


def _signed(wire: JsonObject, opaque: Opaque | None) -> JsonObject | None:
    """``wire`` with its Gemini signature; ``None`` for another provider's payload."""
    if opaque is None:
        return wire
    if not is_signature(opaque):
        return None
    wire["thoughtSignature"] = opaque.data
    return wire


def _minted_only(own: JsonObject | None) -> bool | None:
    """Whether a part's Gemini marks are ``mintedId`` alone (``False`` for none at all);
    ``None`` for any other marks."""
    if not own:
        return False
    return True if len(own) == 1 and own.get("mintedId") is True else None


def _plain_call(part: ToolCallPart) -> JsonObject | None:
    minted_id = _minted_only(part.extra.get(DIALECT))
    if minted_id is None or part.owner == "hosted":
        return None
    call: JsonObject = {} if minted_id else {"id": part.call_id}
    call["name"] = part.name
    if part.arguments.strip():
        try:
            arguments = loads(part.arguments)
        except ValueError:
            return None
        if not isinstance(arguments, dict):
            return None
        call["args"] = arguments
    return _signed({"functionCall": call}, part.signature)


def _plain_result(part: ToolResultPart, encoder: PartEncoder) -> JsonObject | None:
    minted_id = _minted_only(part.extra.get(DIALECT))
    call_id, output = part.call_id, part.output
    if minted_id is None or call_id in encoder.hosted_calls:
        return None
    name = part.name or encoder.call_names.get(call_id)
    if name is None or len(output) > 1 or (output and isinstance(output[0], MediaPart)):
        return None  # unnamed (refused), several outputs (flattened) or media (in parts)
    body: JsonObject = {}
    if call_id and not minted_id and call_id not in encoder.minted_ids:
        body["id"] = call_id
    body["name"] = name
    body["response"] = response_object(part)
    return {"functionResponse": body}


def _encode_message(message: Message, index: int, encoder: PartEncoder) -> _Turn | None:
    role = "model" if message.role == "assistant" else "user"
    own = message.extra.get(DIALECT, {})
    wire: JsonObject = dict(object_entry(own, "fields"))
    parts: list[JsonValue] = []
    turn = _Turn(role, wire, parts)
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

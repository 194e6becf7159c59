"""Which vendor's Messages service issued a thinking signature, and where it may go back.

Anthropic, DeepSeek's and Moonshot's ``/anthropic`` endpoints, MiniMax… speak this one wire
dialect, but each signs its ``thinking`` blocks (``signature``) and ``redacted_thinking``
``data`` with its own keys and refuses another's. A codec bound to one vendor (``issuer``):

* **decode** names every payload it decodes as issued by ``issuer`` (a request's too: the
  gateway's ingress codec is bound to :data:`~interlock.transcript.UNKNOWN_ISSUER`, as a
  client's history does not say who signed it);
* **encode** (a request) replays the payloads of ``issuer`` and of unrecorded issuer (the
  service judges those) and never another vendor's (:func:`replayable`, before the blocks
  are encoded). Another vendor's signed thinking on a finished turn, or in a step without a
  tool call, is dropped with ``reasoning_dropped`` (the service does not need it). In the
  current turn's tool step the model continues the call now and needs that step's thinking:
  ``strict`` refuses (``reasoning_not_replayable``), ``degrade`` drops it with that warning
  (and, thinking on, the request then goes with thinking disabled, see :mod:`._request`);
* **answers** for a client carry the payloads of any vendor (the client holds them).

A dropped part is replaced by an empty reasoning part, which encodes to nothing, so every
later warning still names the part's position in the request.
"""

from __future__ import annotations

from dataclasses import replace

from interlock.codecs._turns import current_turn_start
from interlock.codecs.anthropic._wire import PROVIDER
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    UNKNOWN_ISSUER,
    LossyHistoryError,
    Opaque,
    Part,
    ReasoningPart,
    ReplayPolicy,
    Request,
    TranslationWarning,
)

FORMATS = frozenset({ANTHROPIC_THINKING_SIGNATURE, ANTHROPIC_REDACTED_THINKING})
"""The dialect's opaque formats: signed by whichever vendor's service answered."""


def _foreign_signed(part: Part, issuer: str) -> Opaque | None:
    """The payload of ``part`` in this dialect's formats when another vendor than ``issuer``
    issued it (not a client's of unrecorded issuer)."""
    if not isinstance(part, ReasoningPart):
        return None
    opaque = part.opaque
    if opaque is None or opaque.format not in FORMATS:
        return None
    return None if opaque.provider in (issuer, UNKNOWN_ISSUER) else opaque


def replayable(
    request: Request, issuer: str, policy: ReplayPolicy
) -> tuple[Request, list[TranslationWarning]]:
    """``request`` without another vendor's payloads than ``issuer``'s, and a warning per
    dropped one; raises :class:`LossyHistoryError` for one the current tool step needs
    under strict. The request itself when there is none (the common case: one scan)."""
    messages = request.messages
    foreign = [
        index
        for index, message in enumerate(messages)
        if message.role == "assistant"
        and any(_foreign_signed(part, issuer) for part in message.parts)
    ]
    if not foreign:
        return request, []
    turn_start = current_turn_start(messages)
    warnings: list[TranslationWarning] = []
    changed = list(messages)
    for index in foreign:
        message = messages[index]
        current_step = index >= turn_start and bool(message.tool_calls)
        parts: list[Part] = []
        for position, part in enumerate(message.parts):
            opaque = _foreign_signed(part, issuer)
            if opaque is None:
                parts.append(part)
                continue
            location = f"messages[{index}].parts[{position}]"
            warnings.append(_foreign(opaque, issuer, location, current_step, policy))
            parts.append(ReasoningPart(reasoning_kind="raw", text=""))
        changed[index] = replace(message, parts=tuple(parts))
    return replace(request, messages=tuple(changed)), warnings


def _foreign(
    opaque: Opaque, issuer: str, location: str, current_step: bool, policy: ReplayPolicy
) -> TranslationWarning:
    """The warning for another vendor's payload; raises when the current step needs it."""
    target = "Anthropic" if issuer == PROVIDER else f"{issuer} (Anthropic Messages)"
    what = "thinking" if opaque.format == ANTHROPIC_THINKING_SIGNATURE else "redacted thinking"
    reason = (
        f"{what} signed by {opaque.provider}'s Anthropic-compatible service cannot be "
        f"replayed to {target}"
    )
    code = "reasoning_dropped"
    if current_step:
        reason += "; the current turn's tool call needs it"
        code = "reasoning_not_replayable"
        if policy.mode == "strict":
            raise LossyHistoryError(location, reason, code=code)
    return TranslationWarning(code=code, location=location, message=reason)

"""Which vendor's Messages service issued a thinking signature, and where it may go back.

Anthropic, DeepSeek's and Moonshot's ``/anthropic`` endpoints, MiniMax… speak this one wire
dialect, but each signs its ``thinking`` blocks (``signature``) and ``redacted_thinking``
``data`` with its own keys and refuses another's. A codec bound to one vendor (``issuer``):

* **decode** labels every payload it decodes with ``issuer`` (the dialect's modules name
  their payloads :data:`PROVIDER`; :func:`labelled_request`, :func:`labelled_response` and
  :class:`LabellingStreamDecoder` relabel them at the codec's boundary, so a codec of the
  dialect's own vendor changes nothing);
* **encode** (a request) replays the payloads of ``issuer`` and of unrecorded issuer
  (:data:`~interlock.transcript.UNKNOWN_ISSUER`: a client's history; the service judges
  it) and never another vendor's (:func:`replayable`). Another vendor's signed thinking on a
  finished turn, or in a step without a tool call, is dropped with ``reasoning_dropped``
  (the service does not need it). In the current turn's tool step the model continues the
  call now and needs that step's thinking: ``strict`` refuses
  (``reasoning_not_replayable``), ``degrade`` drops it with that warning (and, thinking on,
  the request then goes with thinking disabled, see :mod:`._request`);
* **answers** for a client carry the payloads of any vendor (the client holds them).

A dropped part is replaced by an empty reasoning part, which encodes to nothing, so every
later warning still names the part's position in the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from interlock.codecs._sse import SseEvent
from interlock.codecs._turns import current_turn_start
from interlock.codecs.anthropic._stream_decode import StreamDecoder
from interlock.codecs.anthropic._wire import PROVIDER
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    UNKNOWN_ISSUER,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ReplayPolicy,
    Request,
    Response,
    TranslationWarning,
    Update,
)

FORMATS = frozenset({ANTHROPIC_THINKING_SIGNATURE, ANTHROPIC_REDACTED_THINKING})
"""The dialect's opaque formats: signed by whichever vendor's service answered."""


def signed(part: Part) -> Opaque | None:
    """The signature (or redacted data) ``part`` carries in this dialect's formats."""
    if not isinstance(part, ReasoningPart):
        return None
    opaque = part.opaque
    return opaque if opaque is not None and opaque.format in FORMATS else None


# ---------------------------------------------------------------- decode: label


def _labelled_part(part: Part, issuer: str) -> Part:
    opaque = signed(part)
    if opaque is None or opaque.provider == issuer:
        return part
    assert isinstance(part, ReasoningPart)
    return replace(part, opaque=replace(opaque, provider=issuer))


def _labelled_messages(messages: Sequence[Message], issuer: str) -> tuple[Message, ...] | None:
    """``messages`` with their payloads labelled ``issuer``; ``None`` when none changed."""
    result: list[Message] = []
    changed = False
    for message in messages:
        parts = tuple(_labelled_part(part, issuer) for part in message.parts)
        if any(new is not old for new, old in zip(parts, message.parts, strict=True)):
            message = replace(message, parts=parts)
            changed = True
        result.append(message)
    return tuple(result) if changed else None


def labelled_request(request: Request, issuer: str) -> Request:
    """A decoded request whose payloads name ``issuer`` (``unknown`` for a client's)."""
    messages = _labelled_messages(request.messages, issuer)
    return request if messages is None else replace(request, messages=messages)


def labelled_response(response: Response, issuer: str) -> Response:
    """A decoded answer whose payloads name ``issuer``, the vendor that answered."""
    messages = _labelled_messages((response.message,), issuer)
    return response if messages is None else replace(response, message=messages[0])


class LabellingStreamDecoder(StreamDecoder):
    """The stream decoder of a vendor's service: its parts' payloads name ``issuer``."""

    __slots__ = ("_issuer",)

    def __init__(self, issuer: str) -> None:
        super().__init__()
        self._issuer = issuer

    def feed(self, event: SseEvent) -> list[Update]:
        """The updates of ``event``, their payloads labelled."""
        return [self._labelled(update) for update in super().feed(event)]

    def _labelled(self, update: Update) -> Update:
        if isinstance(update, PartStarted | PartFinished):
            part = _labelled_part(update.part, self._issuer)
            return update if part is update.part else replace(update, part=part)
        return update


# ---------------------------------------------------------------- encode: replay


def replayable(
    request: Request, issuer: str, policy: ReplayPolicy
) -> tuple[Request, list[TranslationWarning]]:
    """``request`` with the payloads ``issuer``'s service accepts named :data:`PROVIDER`
    (what the encoder replays) and every other vendor's dropped, with the warnings;
    raises :class:`LossyHistoryError` for one the current tool step needs under strict."""
    warnings: list[TranslationWarning] = []
    messages: list[Message] = []
    changed = False
    turn_start = -1
    for index, message in enumerate(request.messages):
        if message.role != "assistant" or not any(signed(part) for part in message.parts):
            messages.append(message)
            continue
        if turn_start < 0:
            turn_start = current_turn_start(request.messages)
        current_step = index >= turn_start and bool(message.tool_calls)
        parts: list[Part] = []
        for position, part in enumerate(message.parts):
            opaque = signed(part)
            if opaque is None or opaque.provider == PROVIDER == issuer:
                parts.append(part)
                continue
            assert isinstance(part, ReasoningPart)
            changed = True
            if opaque.provider in (issuer, UNKNOWN_ISSUER):
                parts.append(replace(part, opaque=replace(opaque, provider=PROVIDER)))
                continue
            location = f"messages[{index}].parts[{position}]"
            warnings.append(_foreign(opaque, issuer, location, current_step, policy))
            parts.append(ReasoningPart(reasoning_kind=part.reasoning_kind, text=""))
        messages.append(replace(message, parts=tuple(parts)))
    if not changed:
        return request, warnings
    return replace(request, messages=tuple(messages)), warnings


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

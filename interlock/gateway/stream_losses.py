"""A translated stream says what it lost in its own last words.

A stream's headers leave before its answer, and what an answer loses is known only at its
end (citations arrive late: Gemini ``groundingMetadata`` in the last chunk, Anthropic
``citations_delta``, Responses annotation events). HTTP trailers would say it too late for
any SDK to show. So the relay folds the upstream's updates and, once the upstream finished,
checks the folded answer as a non-streamed one is checked
(:func:`~interlock.gateway.answer_losses.answer_losses`; the stream encoders carry the same
citations as ``encode_response``, which a test holds for every dialect). When the call has
warnings (its request's, or this answer's losses), the one event that ends the answer in the
client's dialect carries them, as a non-streamed answer would:

* Responses: ``response.completed`` (or ``response.incomplete``): ``response.interlock``;
* Chat Completions: the chunk with the ``finish_reason``: ``interlock``; a stream that
  ended without one (OpenRouter ends on ``[DONE]`` alone) has no such chunk: then the last
  chunk before ``[DONE]`` carries it (the usage chunk, or a chunk with empty ``choices``
  added for it, as the usage chunk has);
* Anthropic Messages: ``message_delta``: ``interlock``;
* Gemini: the last chunk (the one with the ``finishReason``, when the upstream gave one):
  ``modelStatus.message`` ends with ``interlock: <label>``.

Losses are also added to the access log's translation and counted in
``interlock_answer_warnings_total``, the request's warnings in
``interlock_request_warnings_total`` (every one; the final event lists them
:func:`~interlock.gateway.headers.folded`). A stream that fails ends with its error event
instead.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, assert_never, cast

from interlock.codecs._sse import SseEvent
from interlock.gateway.answer_losses import (
    adopt,
    answer_losses,
    count,
    label_gemini,
    warnings_field,
)
from interlock.transcript import (
    JsonObject,
    Response,
    ResponseBuilder,
    ResponseFinished,
    StreamFailed,
    TranslationWarning,
    Update,
)

if TYPE_CHECKING:
    from interlock.gateway.metrics import Metrics
    from interlock.gateway.proxy import ProxyCall

LOGGER = logging.getLogger("interlock.gateway")

_CHAT_FINISH = re.compile(r'"finish_reason"\s*:\s*"')
_RESPONSES_END = ("response.completed", "response.incomplete")
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _ends_answer(call: ProxyCall, event: SseEvent) -> bool:
    """True when ``event`` is the one that ends the answer in the client's dialect."""
    name = call.ingress.name
    match name:
        case "openai-responses":
            return event.event in _RESPONSES_END
        case "openai-chat":
            return event.data.startswith("{") and bool(_CHAT_FINISH.search(event.data))
        case "anthropic":
            return event.event == "message_delta"
        case "gemini":
            return '"finishReason"' in event.data
        case _:
            assert_never(name)


def _carrier(answer: Response) -> SseEvent:
    """A Chat chunk with empty ``choices`` (as a usage chunk is) to carry ``interlock`` in a
    stream that has no finishing chunk; the answer's id, model and creation time."""
    chunk: JsonObject = {
        "id": answer.id or "chatcmpl-interlock",
        "object": "chat.completion.chunk",
        "created": answer.created or 0,
        "model": answer.model or "",
        "choices": [],
    }
    return SseEvent(data=_COMPACT(chunk))


def _labelled(call: ProxyCall, event: SseEvent) -> SseEvent:
    """``event`` with the call's warnings written where its dialect's clients read them."""
    data = cast(JsonObject, json.loads(event.data))
    field = warnings_field(call.translation, call.warnings)
    name = call.ingress.name
    match name:
        case "openai-responses":
            response = data.get("response")
            if isinstance(response, dict):
                response["interlock"] = field
        case "openai-chat" | "anthropic":
            data["interlock"] = field
        case "gemini":
            label_gemini(data, call.translation, call.warnings)
        case _:
            assert_never(name)
    return SseEvent(data=_COMPACT(data), event=event.event)


class StreamLabel:
    """Watches one translated stream's updates and labels its final event (see module)."""

    __slots__ = ("_answer", "_builder", "_call", "_fresh", "_metrics", "_pending")

    def __init__(self, call: ProxyCall, metrics: Metrics) -> None:
        self._call = call
        self._metrics = metrics
        self._builder: ResponseBuilder | None = ResponseBuilder()
        self._answer: Response | None = None
        """The folded answer, once the upstream finished."""
        self._pending = False
        """The upstream finished; the final event is still to be labelled."""
        self._fresh = False
        """The upstream finished in the updates whose events come next (Gemini's last chunk
        is the last of those events)."""

    def updates(self, updates: list[Update]) -> None:
        """Fold the upstream's ``updates``; an upstream finish decides the warnings."""
        builder = self._builder
        if builder is None:
            return
        for update in updates:
            if isinstance(update, StreamFailed):
                self._builder = None  # the client gets an error event, not a final one
                return
            builder.add(update)
            if isinstance(update, ResponseFinished):
                self._builder = None
                self._decide(builder.build())
                return

    def _decide(self, answer: Response) -> None:
        call = self._call
        losses: tuple[TranslationWarning, ...] = answer_losses(call.ingress, answer)
        count(self._metrics, call.ingress, call.warnings, losses, streamed=True)
        if losses:
            adopt(call, losses)
            LOGGER.info("streamed answer to %s lost: %s", call.ingress.name, call.translation)
        self._answer = answer
        self._pending = self._fresh = bool(call.warnings)

    def events(self, events: list[SseEvent]) -> list[SseEvent]:
        """``events`` with the final one labelled, once, when there is something to say."""
        if not self._pending:
            return events
        fresh, self._fresh = self._fresh, False
        for position, event in enumerate(events):
            if _ends_answer(self._call, event):
                return self._label(events, position)
        if fresh and events and self._call.ingress.name == "gemini":
            return self._label(events, len(events) - 1)  # the finish's chunk, no finishReason
        return events

    def closing(self, events: list[SseEvent]) -> list[SseEvent]:
        """The encoder's closing ``events`` (its ``finish()``), labelled as :meth:`events`
        does; a Chat stream still unlabelled (no ``finish_reason``) gets its last chunk
        before ``[DONE]`` labelled, or one added to carry the label."""
        events = self.events(events)
        if not self._pending or self._call.ingress.name != "openai-chat":
            return events
        chunks = [p for p, event in enumerate(events) if event.data.startswith("{")]
        if chunks:
            return self._label(events, chunks[-1])
        assert self._answer is not None, "pending only once the upstream finished"
        done = len(events) - 1 if events and events[-1].data == "[DONE]" else len(events)
        return self._label([*events[:done], _carrier(self._answer), *events[done:]], done)

    def _label(self, events: list[SseEvent], position: int) -> list[SseEvent]:
        self._pending = False
        return [
            *events[:position],
            _labelled(self._call, events[position]),
            *events[position + 1 :],
        ]

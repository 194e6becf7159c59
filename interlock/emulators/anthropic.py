"""An emulated Anthropic Messages API (``POST /v1/messages``, ``/v1/messages/count_tokens``).

It checks like the service: an ``anthropic-version`` header, then the request rules of
:func:`~interlock.codecs.anthropic.find_violation` (envelope, thinking settings, alternating
roles, tool pairing, the leading thinking block of an open tool loop) with the service's
own error strings, and a thinking block's signature must be one this emulator minted for
exactly that thinking text, by the vendor it stands for (``issuer``: anything else, another
vendor's signature included, is ``Invalid `signature` in `thinking` block``).
With thinking on, it answers like a Claude model: a signed thinking block first, then text
or ``tool_use`` blocks with ``toolu_`` ids; ``stop_reason`` ``tool_use`` or ``end_turn``.
A prompt containing the documented magic string adds a ``redacted_thinking`` block.
The reasoning effort is checked per model like the service (:func:`effort_violation`):
``output_config.effort`` only on a model that takes it and only at its levels, and, on a
model the table knows, only the ``thinking`` types it accepts; a model the gateway
configures (``effort_levels``) takes the levels its configuration says.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import cast

from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, StreamingResponse
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route

from interlock.codecs._sse import SseEvent, format_sse
from interlock.codecs.anthropic import (
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_error,
    encode_response,
    find_violation,
)
from interlock.codecs.anthropic._effort import effort_support, effort_violation
from interlock.codecs.anthropic._wire import PROVIDER
from interlock.emulators._brain import (
    DefaultBrain,
    Rejection,
    ScriptBrain,
    mint_token,
)
from interlock.emulators._service import EmulatedService, Incoming, rejected
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    DecodeError,
    JsonObject,
    JsonValue,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    Request,
    Response,
    ToolCallPart,
    Update,
    fold_updates,
    response_to_updates,
)

REDACTED_TRIGGER = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)
_VERSION_MISSING = "anthropic-version: header is required"


def token_kind(format: str, issuer: str = PROVIDER) -> str:
    """The token kind of ``issuer``'s payloads of ``format`` (each vendor's own keys)."""
    return format if issuer == PROVIDER else f"{issuer}.{format.partition('.')[2]}"


def thinking_token(model: str, text: str, issuer: str = PROVIDER) -> str:
    """The signature an emulator of vendor ``issuer`` gives a thinking block: bound to the
    vendor, the model and the text."""
    return mint_token(token_kind(ANTHROPIC_THINKING_SIGNATURE, issuer), f"{model}\x00{text}")


def _signature_check(model: str, issuer: str) -> Callable[[JsonObject], bool]:
    def valid(block: JsonObject) -> bool:
        """Minted by this vendor's emulator, by this model, for exactly this thinking text."""
        signature = block.get("signature")
        text = block.get("thinking")
        return isinstance(text, str) and signature == thinking_token(model, text, issuer)

    return valid


def _reject(status: int, message: str) -> Rejection:
    return Rejection(status=status, body=encode_error(status, message))


class AnthropicEmulator(EmulatedService):
    """An Anthropic Messages service answering from a script, then from the brain.

    ``issuer`` is the vendor it stands for (``anthropic``, ``deepseek``…): its signatures
    verify only here, as each vendor's service accepts only the thinking it signed, and a
    non-default vendor's message and tool-use ids carry its name (``msg_emudeepseek_000001``).
    ``effort_levels`` (model name → its ``output_config.effort`` levels, ``()`` for a
    budget-only model) overrides the levels the model's name gives.
    """

    def __init__(
        self,
        brain: DefaultBrain | ScriptBrain | None = None,
        *,
        offload: bool = False,
        issuer: str = PROVIDER,
        effort_levels: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        super().__init__(brain, offload=offload)
        self._counter = 0
        self.issuer = issuer
        self._stem = "emu" if issuer == PROVIDER else f"emu{issuer}"
        self.effort_levels = dict(effort_levels or {})

    def validate(self, payload: JsonObject) -> Rejection | None:
        """The service's request rules, in the order it reports them."""
        model = payload.get("model")
        name = model if isinstance(model, str) else ""
        check = _signature_check(name, self.issuer)
        support = effort_support(name, self.issuer, self.effort_levels.get(name))
        violation = find_violation(payload, signature_valid=check) or effort_violation(
            payload, support
        )
        if violation is None:
            return None
        return Rejection(
            status=violation.status, body=encode_error(violation.status, violation.message)
        )

    def routes(self) -> list[BaseRoute]:
        """The service's paths."""
        return [
            Route("/v1/messages", self.serve, methods=["POST"]),
            Route("/v1/messages/count_tokens", self._count, methods=["POST"]),
        ]

    def precheck(self, incoming: Incoming) -> Rejection | None:
        if incoming.headers.get("anthropic-version"):
            return None
        return _reject(400, _VERSION_MISSING)

    def unparseable(self) -> Rejection:
        return _reject(400, "There was an error parsing the body of your request.")

    def check(self, payload: JsonObject, incoming: Incoming) -> Rejection | None:
        return self.validate(payload)

    def decode(self, payload: JsonObject, incoming: Incoming) -> Request:
        return decode_request(payload)

    def decode_failed(self, error: DecodeError) -> Rejection:
        return _reject(400, str(error))

    async def _count(self, http: HttpRequest) -> HttpResponse:
        """``count_tokens``: checked like a message request, about four characters a token."""
        headers = dict(http.headers)
        incoming = Incoming(body=await http.body(), path={}, query={}, headers=headers)
        payload = self.parse(incoming)
        if isinstance(payload, Rejection):
            return rejected(payload)
        rejection = self.validate({**payload, "max_tokens": 1 << 30})
        if rejection is not None:
            return rejected(rejection)
        prompt = {key: payload.get(key) for key in ("system", "messages", "tools")}
        return JSONResponse({"input_tokens": max(1, len(json.dumps(prompt)) // 4)})

    def scripted_stream(
        self, events: list[JsonValue], request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        items = [_event(item) for item in events]
        if request.stream:
            return _stream_response(items)
        decoder = StreamDecoder()
        updates = [
            u for e in items for u in decoder.feed(SseEvent(json.dumps(e), str(e.get("type"))))
        ]
        return JSONResponse(encode_response(fold_updates(updates)))

    def scripted_response(
        self, wire: JsonObject, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        if not request.stream:
            return JSONResponse(wire)
        return _stream_response(_encode_stream(response_to_updates(decode_response(wire))))

    def answer(
        self, response: Response, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        response = self._dress(response, request, payload)
        if request.stream:
            return _stream_response(_encode_stream(response_to_updates(response)))
        return JSONResponse(encode_response(response))

    def _dress(self, response: Response, request: Request, payload: JsonObject) -> Response:
        """What the real service adds: ids, signed thinking when on, stop reasons."""
        self._counter += 1
        thinking = payload.get("thinking")
        enabled = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
        parts: list[Part] = []
        for part in response.message.parts:
            if isinstance(part, ReasoningPart):
                if enabled:
                    opaque = Opaque(
                        provider=self.issuer,
                        format=ANTHROPIC_THINKING_SIGNATURE,
                        data=thinking_token(request.model, part.text, self.issuer),
                    )
                    parts.append(ReasoningPart(reasoning_kind="raw", text=part.text, opaque=opaque))
                    if REDACTED_TRIGGER in json.dumps(payload.get("messages")):
                        parts.append(_redacted(self.issuer))
                continue
            if isinstance(part, ToolCallPart):
                part = replace(
                    part, call_id=f"toolu_{self._stem}_{self._counter:04d}_{part.call_id[-1]}"
                )
            parts.append(part)
        calls = any(isinstance(part, ToolCallPart) for part in parts)
        return replace(
            response,
            id=f"msg_{self._stem}_{self._counter:06d}",
            model=request.model or response.model,
            message=Message(role="assistant", parts=tuple(parts)),
            native_finish_reason="tool_use" if calls else "end_turn",
            extra={"anthropic": {"stop_sequence": None}},
        )


def _redacted(issuer: str) -> ReasoningPart:
    data = mint_token(token_kind(ANTHROPIC_REDACTED_THINKING, issuer), "redacted")
    opaque = Opaque(provider=issuer, format=ANTHROPIC_REDACTED_THINKING, data=data)
    return ReasoningPart(reasoning_kind="encrypted", opaque=opaque)


def _event(item: JsonValue) -> JsonObject:
    value = cast(JsonValue, json.loads(item)) if isinstance(item, str) else item
    if not isinstance(value, dict):
        raise ValueError("a scripted Anthropic stream event is a JSON object")
    return value


def _encode_stream(updates: list[Update]) -> list[JsonObject]:
    encoder = StreamEncoder()
    events = [event for update in updates for event in encoder.encode(update)]
    events.extend(encoder.finish())
    return [cast(JsonObject, json.loads(event.data)) for event in events]


def _stream_response(events: list[JsonObject]) -> StreamingResponse:
    async def frames() -> AsyncIterator[str]:
        for event in events:
            yield format_sse(json.dumps(event, ensure_ascii=False), str(event.get("type")))

    return StreamingResponse(frames(), media_type="text/event-stream")


def create_app(emulator: AnthropicEmulator) -> Starlette:
    """A Starlette app serving ``emulator``."""
    return Starlette(routes=emulator.routes())


EMULATOR = AnthropicEmulator
"""This dialect's emulator class, found by :func:`interlock.emulators.create_emulator`."""

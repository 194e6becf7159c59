"""An emulated Gemini Developer API (``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent``, SSE with ``?alt=sse``, else a streamed JSON array).

It validates like the service (``find_violation``: unknown fields, function turn rules,
Gemini 3 current-turn thought signatures with the exact error strings) and answers like a
Gemini 3 model would: a unique ``id`` on every ``functionCall``, a thought signature on the
first call of each response, or on the last part of a text-only response (streaming: on a
trailing empty-text part), and thought summaries only when ``includeThoughts`` is set.

Signatures are :func:`mint_token` tokens bound to the call's name and arguments, compared
by decoded bytes (the SDK re-encodes them URL-safe, provider-wire.md trap 9): a token that
was not minted here, or moved to another call, is "not valid". Gemini 1.x/2.x models
(model name ``gemini-1…``/``gemini-2…``) do not enforce signatures, like the service; a
model the gateway configures (``thought_signatures``) follows its configuration.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import cast

from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, StreamingResponse
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route

from interlock.codecs._sse import format_sse
from interlock.codecs.gemini import (
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_error,
    encode_response,
    find_violation,
)
from interlock.emulators._brain import (
    DefaultBrain,
    Rejection,
    ScriptBrain,
    mint_token,
    verify_token,
)
from interlock.emulators._logprobs import MAX_TOP, with_logprobs
from interlock.emulators._service import EmulatedService, Incoming, fan_out, rejected
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    DecodeError,
    JsonObject,
    JsonValue,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    Update,
    fold_updates,
    response_to_updates,
)

SIGNATURE_KIND = GEMINI_THOUGHT_SIGNATURE
_UNPARSEABLE = "Invalid JSON payload received. Unexpected token."
_METHODS = ("generateContent", "streamGenerateContent")


def call_binding(name: str, args: JsonValue) -> str:
    """What a call's signature is bound to: its name and canonical arguments."""
    return f"call\x00{name}\x00{json.dumps(args, sort_keys=True, separators=(',', ':'))}"


def _google(data: str) -> Opaque:
    return Opaque(provider="google", format=SIGNATURE_KIND, data=data)


def _signature_valid(decoded: bytes, part: JsonObject) -> bool:
    """A present signature is genuine: minted here and, on a call, bound to that call."""
    token = base64.b64encode(decoded).decode()
    if not verify_token(SIGNATURE_KIND, token):
        return False
    call = part.get("functionCall", part.get("function_call"))
    if not isinstance(call, dict):
        return True
    expected = mint_token(SIGNATURE_KIND, call_binding(str(call.get("name")), call.get("args", {})))
    return token == expected


class GeminiEmulator(EmulatedService):
    """A Gemini ``generateContent`` service answering from a script, then from the brain."""

    def __init__(
        self,
        brain: DefaultBrain | ScriptBrain | None = None,
        *,
        require_signatures: bool | None = None,
        signature_rules: Mapping[str, bool] | None = None,
        offload: bool = False,
    ) -> None:
        """``require_signatures``: one rule for every model; ``None`` asks ``signature_rules``
        (model name → whether it requires them: the gateway passes the ``thought_signatures``
        of the models routed to this upstream), and a model named in neither is decided by
        its name (every model but Gemini 1.x/2.x requires them)."""
        super().__init__(
            brain if brain is not None else DefaultBrain(call_prefix="call_gemini"), offload=offload
        )
        self.require_signatures = require_signatures
        self.signature_rules: Mapping[str, bool] = dict(signature_rules or {})
        self._counter = 0

    def requires_signatures(self, model: str) -> bool:
        """Whether the emulated ``model`` refuses a current-turn call without a signature."""
        if self.require_signatures is not None:
            return self.require_signatures
        rule = self.signature_rules.get(model)
        if rule is not None:
            return rule
        return not model.startswith(("gemini-1", "gemini-2"))

    def validate(self, payload: JsonObject, *, model: str | None = None) -> Rejection | None:
        """The service's checks, in the order it reports them; ``model`` is the path's model."""
        require = self.requires_signatures(model or "")
        violation = find_violation(
            payload, require_signatures=require, signature_valid=_signature_valid
        )
        if violation is None:
            return candidates_violation(payload) or logprobs_violation(payload)
        body = encode_error(violation.status, violation.message, code=violation.rpc_status)
        return Rejection(status=violation.status, body=body)

    def routes(self) -> list[BaseRoute]:
        """The service's paths (``v1beta`` as the SDK uses, and ``v1``)."""
        return [
            Route("/v1beta/models/{target}", self.serve, methods=["POST"]),
            Route("/v1/models/{target}", self.serve, methods=["POST"]),
        ]

    async def serve(self, http: HttpRequest) -> HttpResponse:
        """``:countTokens`` is answered here; the generation methods by the shared path."""
        if not str(http.path_params["target"]).endswith(":countTokens"):
            return await super().serve(http)
        path = {"target": str(http.path_params["target"])}
        incoming = Incoming(body=await http.body(), path=path, query={}, headers={})
        payload = self.parse(incoming)
        if isinstance(payload, Rejection):
            return rejected(payload)
        inner = payload.get("generateContentRequest")
        request = cast(JsonObject, inner) if isinstance(inner, dict) else payload
        prompt = {key: request.get(key) for key in ("contents", "systemInstruction", "tools")}
        return JSONResponse({"totalTokens": max(1, len(json.dumps(prompt)) // 4)})

    def precheck(self, incoming: Incoming) -> Rejection | None:
        model, _, method = incoming.path["target"].partition(":")
        if method in _METHODS or method == "countTokens":
            return None
        message = f"models/{model} is not found for API version v1beta, or is not supported for {method or 'this method'}."
        return Rejection(404, encode_error(404, message))

    def unparseable(self) -> Rejection:
        return Rejection(400, encode_error(400, _UNPARSEABLE))

    def check(self, payload: JsonObject, incoming: Incoming) -> Rejection | None:
        return self.validate(payload, model=_target(incoming)[0])

    def decode(self, payload: JsonObject, incoming: Incoming) -> Request:
        model, method = _target(incoming)
        return decode_request(payload, model=model, stream=method == "streamGenerateContent")

    def decode_failed(self, error: DecodeError) -> Rejection:
        return Rejection(400, encode_error(400, str(error)))

    def scripted_stream(
        self, events: list[JsonValue], request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        chunks = [_chunk(item) for item in events]
        if request.stream:
            return _stream_response(chunks, _sse(incoming))
        decoder = StreamDecoder()
        updates = [u for chunk in chunks for u in decoder.feed_chunk(chunk)]
        return JSONResponse(encode_response(fold_updates(updates)))

    def scripted_response(
        self, wire: JsonObject, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        if not request.stream:
            return JSONResponse(wire)
        updates = response_to_updates(decode_response(wire))
        return _stream_response(_encode_stream(updates), _sse(incoming))

    def answer(
        self, response: Response, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        response = self._dress(response, request)
        if request.options.logprobs is True:
            response = with_logprobs(response, request.options.top_logprobs or 0)
        count = candidate_count(payload)
        if request.stream:
            chunks = [
                fan_out(chunk, "candidates", count)
                for chunk in _encode_stream(response_to_updates(response))
            ]
            return _stream_response(chunks, _sse(incoming))
        return JSONResponse(fan_out(encode_response(response), "candidates", count))

    def _dress(self, response: Response, request: Request) -> Response:
        """What the real service adds: ids, signatures, thoughts only when asked for."""
        self._counter += 1
        parts: list[Part] = [
            part
            for part in response.message.parts
            if not isinstance(part, ReasoningPart) or request.options.include_reasoning
        ]
        calls = [index for index, part in enumerate(parts) if isinstance(part, ToolCallPart)]
        if calls:
            first = parts[calls[0]]
            assert isinstance(first, ToolCallPart)
            token = mint_token(SIGNATURE_KIND, call_binding(first.name, first.parsed_arguments))
            parts[calls[0]] = replace(first, signature=_google(token))
        else:
            text = "".join(part.text for part in parts if isinstance(part, TextPart))
            token = mint_token(SIGNATURE_KIND, f"text\x00{text}")
            if request.stream or not parts or not isinstance(parts[-1], TextPart):
                parts.append(ReasoningPart(reasoning_kind="encrypted", opaque=_google(token)))
            else:
                parts[-1] = replace(parts[-1], signature=_google(token))
        return replace(
            response,
            id=f"emu-gemini-{self._counter:06d}",
            model=request.model or response.model,
            message=Message(role="assistant", parts=tuple(parts)),
        )


def _target(incoming: Incoming) -> tuple[str, str]:
    """The path's model and method (``gemini-3-flash:generateContent``)."""
    model, _, method = incoming.path["target"].partition(":")
    return model, method


def _sse(incoming: Incoming) -> bool:
    return incoming.query.get("alt") == "sse"


MAX_CANDIDATES = 8


def candidate_count(payload: JsonObject) -> int:
    """``generationConfig.candidateCount`` (1 when absent)."""
    config = payload.get("generationConfig")
    count = config.get("candidateCount") if isinstance(config, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


def candidates_violation(payload: JsonObject) -> Rejection | None:
    """``candidateCount`` is an integer from 1 to :data:`MAX_CANDIDATES`."""
    config = payload.get("generationConfig")
    if not isinstance(config, dict) or "candidateCount" not in config:
        return None
    count = config["candidateCount"]
    if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_CANDIDATES:
        return None
    message = (
        "Invalid value at 'generation_config.candidate_count': candidateCount must be an "
        f"integer from 1 to {MAX_CANDIDATES}, got {json.dumps(count)}."
    )
    return Rejection(400, encode_error(400, message))


def logprobs_violation(payload: JsonObject) -> Rejection | None:
    """``logprobs`` (top candidates per step) is an integer from 0 to 20."""
    config = payload.get("generationConfig")
    if not isinstance(config, dict) or config.get("logprobs") is None:
        return None
    top = config["logprobs"]
    if isinstance(top, int) and not isinstance(top, bool) and 0 <= top <= MAX_TOP:
        return None
    message = (
        "Invalid value at 'generation_config.logprobs': logprobs must be an integer from 0 "
        f"to {MAX_TOP}, got {json.dumps(top)}."
    )
    return Rejection(400, encode_error(400, message))


def _chunk(item: JsonValue) -> JsonObject:
    """A scripted stream event: a chunk object, or its JSON text."""
    value = cast(JsonValue, json.loads(item)) if isinstance(item, str) else item
    if not isinstance(value, dict):
        raise ValueError("a scripted Gemini stream event is a JSON object")
    return value


def _encode_stream(updates: list[Update]) -> list[JsonObject]:
    encoder = StreamEncoder()
    events = [event for update in updates for event in encoder.encode(update)]
    events.extend(encoder.finish())
    return [cast(JsonObject, json.loads(event.data)) for event in events]


def _stream_response(chunks: list[JsonObject], sse: bool) -> StreamingResponse:
    """SSE frames with ``?alt=sse``; otherwise one JSON array streamed element by element."""

    async def frames() -> AsyncIterator[str]:
        for chunk in chunks:
            yield format_sse(json.dumps(chunk, ensure_ascii=False))

    async def array() -> AsyncIterator[str]:
        for index, chunk in enumerate(chunks):
            yield ("[" if index == 0 else ",\r\n") + json.dumps(chunk, ensure_ascii=False)
        yield "]" if chunks else "[]"

    if sse:
        return StreamingResponse(frames(), media_type="text/event-stream")
    return StreamingResponse(array(), media_type="application/json")


def create_app(emulator: GeminiEmulator) -> Starlette:
    """A Starlette app serving ``emulator``."""
    return Starlette(routes=emulator.routes())


EMULATOR = GeminiEmulator
"""This dialect's emulator class, found by :func:`interlock.emulators.create_emulator`."""

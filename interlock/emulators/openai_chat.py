"""An emulated OpenAI-compatible Chat Completions service (``POST /v1/chat/completions``).

It validates like the services do (provider-wire.md §2.4 pairing, with OpenAI's own
strings and ``param``; ``n`` from 1 to 128; ``top_logprobs`` from 0 to 20 and only with
``logprobs: true``), answers every choice asked for and the tokens' log-probabilities when
asked, plus the rule of its reasoning dialect:

* ``reasoning_content`` (DeepSeek thinking mode): every tool-call assistant message must
  carry the ``reasoning_content`` key, else DeepSeek's 400;
* ``gemini-compat``: issues ``extra_content.google.thought_signature`` on the first tool
  call of a batch (and on text turns) and refuses current-turn tool-call messages whose
  first call lacks a genuine one, with Gemini's 400;
* ``openrouter``: issues ``reasoning_details`` (summary + ``reasoning.encrypted``) and
  refuses a replayed current-turn tool-call message whose details were dropped or altered.

Answers come from a script first, then the brain; non-streaming or SSE per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import cast

from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route

from interlock.codecs._sse import SseEvent, format_sse
from interlock.codecs.openai_chat import (
    ReasoningDialect,
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_error,
    encode_response,
    find_pairing_violation,
)
from interlock.emulators._brain import (
    DefaultBrain,
    Rejection,
    ScriptBrain,
    mint_token,
    verify_token,
)
from interlock.emulators._logprobs import MAX_TOP, with_logprobs
from interlock.emulators._service import EmulatedService, Incoming, fan_out
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
    fold_updates,
    response_to_updates,
)

SIGNATURE_KIND = GEMINI_THOUGHT_SIGNATURE
DETAILS_KIND = "openrouter.reasoning"
GEMINI_DUMMIES = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
_DETAIL_FORMAT = "google-gemini-v1"
_UNPARSEABLE = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON.)"
)
_DEEPSEEK_MISSING = (
    "Missing `reasoning_content` field in the assistant message at message index {index}. "
    "For more information, please refer to "
    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
_GEMINI_MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
_CORRUPTED = "Corrupted thought signature."


def _reject(
    message: str, *, param: str | None = None, code: str | None = None, status: int = 400
) -> Rejection:
    return Rejection(status=status, body=encode_error(status, message, code=code, param=param))


def _signature_content(call_id: str, name: str) -> str:
    return f"{call_id}\x00{name}"


def _details_content(summaries: list[str], call_ids: list[str]) -> str:
    return "\x00".join(summaries) + "\x01" + "\x00".join(call_ids)


class OpenAIChatEmulator(EmulatedService):
    """A Chat Completions service speaking ``reasoning_dialect``."""

    def __init__(
        self,
        brain: DefaultBrain | ScriptBrain | None = None,
        reasoning_dialect: ReasoningDialect = "reasoning_content",
        stream_delay: float = 0.0,
        *,
        offload: bool = False,
    ) -> None:
        super().__init__(
            brain if brain is not None else DefaultBrain(call_prefix="call_chat"), offload=offload
        )
        self.reasoning_dialect: ReasoningDialect = reasoning_dialect
        self.stream_delay = stream_delay
        """Seconds between stream events (a slow model, for drain and soak tests)."""
        self._counter = 0

    # -- validation ---------------------------------------------------------------------

    def validate(self, payload: JsonObject) -> Rejection | None:
        """The service's checks, in the order it reports them."""
        if not isinstance(payload.get("model"), str):
            return _reject("you must provide a model parameter")
        messages = payload.get("messages")
        if messages is None:
            return _reject(
                "Missing required parameter: 'messages'.",
                param="messages",
                code="missing_required_parameter",
            )
        if not isinstance(messages, list) or not messages:
            return _reject(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                param="messages",
                code="empty_array",
            )
        rejection = _choices_rule(payload) or _logprobs_rule(payload)
        if rejection is not None:
            return rejection
        violation = find_pairing_violation(messages)
        if violation is not None:
            return _reject(violation.message, param=violation.param)
        wire = [item for item in messages if isinstance(item, dict)]
        match self.reasoning_dialect:
            case "reasoning_content":
                return _deepseek_rule(wire)
            case "gemini-compat":
                return _gemini_rule(wire)
            case "openrouter":
                return _openrouter_rule(wire)
            case "none" | "reasoning":
                return None

    # -- serving ------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """The service's path."""
        return [Route("/v1/chat/completions", self.serve, methods=["POST"])]

    def unparseable(self) -> Rejection:
        return _reject(_UNPARSEABLE)

    def check(self, payload: JsonObject, incoming: Incoming) -> Rejection | None:
        return self.validate(payload)

    def decode(self, payload: JsonObject, incoming: Incoming) -> Request:
        return decode_request(payload)

    def decode_failed(self, error: DecodeError) -> Rejection:
        return _reject(error.detail, param=error.path or None)

    def scripted_stream(
        self, events: list[JsonValue], request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        lines = [event if isinstance(event, str) else json.dumps(event) for event in events]
        if request.stream:
            return _sse([SseEvent(data=line) for line in lines], self.stream_delay)
        decoder = StreamDecoder()
        updates = [u for line in lines for u in decoder.feed(SseEvent(data=line))]
        return JSONResponse(encode_response(fold_updates(updates)))

    def scripted_response(
        self, wire: JsonObject, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        if not request.stream:
            return JSONResponse(wire)
        return self._stream(decode_response(wire), _include_usage(payload), dialect=None, choices=1)

    def answer(
        self, response: Response, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        response = self._dress(response)
        if payload.get("logprobs") is True:
            top = payload.get("top_logprobs")
            response = with_logprobs(response, top if isinstance(top, int) else 0)
        choices = _choice_count(payload)
        if request.stream:
            usage = _include_usage(payload)
            return self._stream(response, usage, dialect=self.reasoning_dialect, choices=choices)
        body = encode_response(response, reasoning_dialect=self.reasoning_dialect)
        return JSONResponse(fan_out(body, "choices", choices))

    def _stream(
        self,
        response: Response,
        include_usage: bool,
        *,
        dialect: ReasoningDialect | None,
        choices: int,
    ) -> HttpResponse:
        encoder = StreamEncoder(reasoning_dialect=dialect, include_usage=include_usage)
        events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
        events = [_fan_out_event(event, choices) for event in events + encoder.finish()]
        return _sse(events, self.stream_delay)

    def _dress(self, response: Response) -> Response:
        """Attach what this dialect's real service would: its reasoning and signatures."""
        self._counter += 1
        parts = list(response.message.parts)
        match self.reasoning_dialect:
            case "none":
                parts = [p for p in parts if not isinstance(p, ReasoningPart)]
            case "reasoning_content" | "reasoning":
                # The emulated model's own thinking is raw reasoning on this wire.
                parts = [
                    replace(p, reasoning_kind="raw") if isinstance(p, ReasoningPart) else p
                    for p in parts
                ]
            case "openrouter":
                parts = _openrouter_details(parts)
            case "gemini-compat":
                parts = _gemini_signatures(parts)
        message = Message(role="assistant", parts=tuple(parts))
        return replace(response, id=f"chatcmpl-emu{self._counter:06d}", message=message)


MAX_CHOICES = 128


def _choice_count(payload: JsonObject) -> int:
    count = payload.get("n")
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


def _choices_rule(payload: JsonObject) -> Rejection | None:
    """``n``: an integer from 1 to 128, as the service requires."""
    return _integer_rule(payload, "n", 1, MAX_CHOICES)


def _integer_rule(payload: JsonObject, name: str, low: int, high: int) -> Rejection | None:
    """``name``, when present, is an integer from ``low`` to ``high`` (the service's words)."""
    value = payload.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        message = f"Invalid type for '{name}': expected an integer, but got {type(value).__name__} instead."
        return _reject(message, param=name, code="invalid_type")
    if value < low:
        message = f"Invalid '{name}': integer below minimum value. Expected a value >= {low}, but got {value} instead."
        return _reject(message, param=name, code="integer_below_min_value")
    if value > high:
        message = f"Invalid '{name}': integer above maximum value. Expected a value <= {high}, but got {value} instead."
        return _reject(message, param=name, code="integer_above_max_value")
    return None


def _logprobs_rule(payload: JsonObject) -> Rejection | None:
    """``top_logprobs``: an integer from 0 to 20, and only with ``logprobs: true``."""
    rejected = _integer_rule(payload, "top_logprobs", 0, MAX_TOP)
    if rejected is not None:
        return rejected
    top = payload.get("top_logprobs")
    if top and payload.get("logprobs") is not True:
        message = "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used."
        return _reject(message, param="top_logprobs", code="invalid_value")
    return None


def _fan_out_event(event: SseEvent, count: int) -> SseEvent:
    """A stream chunk carrying every choice's delta (the usage chunk has none)."""
    if count == 1 or event.data == "[DONE]":
        return event
    chunk = cast(JsonObject, json.loads(event.data))
    return SseEvent(data=json.dumps(fan_out(chunk, "choices", count)), event=event.event)


def _include_usage(body: JsonObject) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _current_turn(messages: list[JsonObject]) -> range:
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return range(last_user + 1, len(messages))


def _tool_calls(message: JsonObject) -> list[JsonObject]:
    calls = message.get("tool_calls")
    if message.get("role") != "assistant" or not isinstance(calls, list):
        return []
    return [call for call in calls if isinstance(call, dict)]


def _function_name(call: JsonObject) -> str:
    function = call.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else ""


def _signature(call: JsonObject) -> str | None:
    extra_content = call.get("extra_content")
    google = extra_content.get("google") if isinstance(extra_content, dict) else None
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    return signature if isinstance(signature, str) else None


def _deepseek_rule(messages: list[JsonObject]) -> Rejection | None:
    for index, message in enumerate(messages):
        if _tool_calls(message) and not isinstance(message.get("reasoning_content"), str):
            return _reject(_DEEPSEEK_MISSING.format(index=index), code="invalid_request_error")
    return None


def _gemini_rule(messages: list[JsonObject]) -> Rejection | None:
    for index in _current_turn(messages):
        calls = _tool_calls(messages[index])
        if not calls:
            continue
        first = calls[0]
        name = _function_name(first)
        signature = _signature(first)
        param = f"messages.[{index}].tool_calls"
        if signature is None:
            text = _GEMINI_MISSING.format(name=name, position=index + 1)
            return _reject(text, param=param, code="INVALID_ARGUMENT")
        expected = mint_token(SIGNATURE_KIND, _signature_content(str(first.get("id")), name))
        if signature not in GEMINI_DUMMIES and signature != expected:
            return _reject(_CORRUPTED, param=param, code="INVALID_ARGUMENT")
    return None


def _openrouter_rule(messages: list[JsonObject]) -> Rejection | None:
    for index in _current_turn(messages):
        message = messages[index]
        calls = _tool_calls(message)
        if not calls:
            continue
        details = message.get("reasoning_details")
        items = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
        encrypted = [d.get("data") for d in items if d.get("type") == "reasoning.encrypted"]
        param = f"messages.[{index}].reasoning_details"
        name = _function_name(calls[0])
        if not encrypted or not isinstance(encrypted[0], str):
            text = _GEMINI_MISSING.format(name=name, position=index + 1)
            return _reject(text, param=param, code="INVALID_ARGUMENT")
        summaries = [
            str(d.get("summary", "")) for d in items if d.get("type") == "reasoning.summary"
        ]
        call_ids = [str(call.get("id")) for call in calls]
        expected = mint_token(DETAILS_KIND, _details_content(summaries, call_ids))
        if encrypted[0] != expected or not verify_token(DETAILS_KIND, encrypted[0]):
            return _reject(_CORRUPTED, param=param, code="INVALID_ARGUMENT")
    return None


def _openrouter_details(parts: list[Part]) -> list[Part]:
    """Summary details in place of the brain's reasoning, then one encrypted detail."""
    summaries = [p.text for p in parts if isinstance(p, ReasoningPart)]
    call_ids = [p.call_id for p in parts if isinstance(p, ToolCallPart)]
    out: list[Part] = []
    for index, text in enumerate(summaries):
        detail: JsonObject = {
            "type": "reasoning.summary",
            "summary": text,
            "format": _DETAIL_FORMAT,
            "index": index,
        }
        out.append(_detail_part("summary", text, detail))
    token = mint_token(DETAILS_KIND, _details_content(summaries, call_ids))
    encrypted: JsonObject = {
        "type": "reasoning.encrypted",
        "data": token,
        "format": _DETAIL_FORMAT,
        "index": len(summaries),
    }
    out.append(_detail_part("encrypted", "", encrypted))
    out.extend(p for p in parts if not isinstance(p, ReasoningPart))
    return out


def _detail_part(kind: str, text: str, detail: JsonObject) -> ReasoningPart:
    opaque = Opaque(provider="openrouter", format="openrouter.reasoning_detail", data=detail)
    if kind == "summary":
        return ReasoningPart(reasoning_kind="summary", text=text, opaque=opaque)
    return ReasoningPart(reasoning_kind="encrypted", text=text, opaque=opaque)


def _gemini_signatures(parts: list[Part]) -> list[Part]:
    """Gemini signs the first call of a batch, or the last text part of a text turn."""
    out: list[Part] = [p for p in parts if not isinstance(p, ReasoningPart)]
    calls = [i for i, p in enumerate(out) if isinstance(p, ToolCallPart)]
    texts = [i for i, p in enumerate(out) if isinstance(p, TextPart)]
    target = calls[0] if calls else (texts[-1] if texts else None)
    if target is None:
        return out
    part = out[target]
    if isinstance(part, ToolCallPart):
        data = mint_token(SIGNATURE_KIND, _signature_content(part.call_id, part.name))
        out[target] = replace(part, signature=_google(data))
    elif isinstance(part, TextPart):
        out[target] = replace(part, signature=_google(mint_token(SIGNATURE_KIND, part.text)))
    return out


def _google(data: str) -> Opaque:
    return Opaque(provider="google", format="gemini.thought_signature", data=data)


def _sse(events: list[SseEvent], delay: float = 0.0) -> StreamingResponse:
    async def body() -> AsyncIterator[str]:
        for index, event in enumerate(events):
            if delay and index:
                await asyncio.sleep(delay)
            yield format_sse(event.data, event.event)

    return StreamingResponse(body(), media_type="text/event-stream")


def create_app(emulator: OpenAIChatEmulator) -> Starlette:
    """A Starlette app serving ``emulator``."""
    return Starlette(routes=emulator.routes())


EMULATOR = OpenAIChatEmulator
"""This dialect's emulator class, found by :func:`interlock.emulators.create_emulator`."""

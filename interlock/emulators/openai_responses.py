"""An emulated OpenAI Responses service (``POST /v1/responses``).

It validates like the service (provider-wire §1.6, pre-flight checks 1–7, with the
service's error strings, statuses and ``param``), answers with a brain, issues reasoning
items whose ``encrypted_content`` is minted by :func:`mint_token` (and verifies replayed
ones: a blob another vendor's service issued is refused as the services do, see
``issuer``), keeps stored responses in memory so ``previous_response_id`` works (and
``previous_response_not_found`` is real) and so do retrieve, delete, cancel and input
items (:mod:`._responses_state`) and conversations (:mod:`._conversations`), and streams
the official event sequence.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import cast

from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, StreamingResponse
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route

from interlock.codecs._sse import SseEvent, format_sse
from interlock.codecs.openai_responses import (
    ENCRYPTED_FORMAT,
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_error,
    encode_response,
)
from interlock.codecs.openai_responses._wire import LOGPROBS_INCLUDE
from interlock.emulators._brain import (
    DefaultBrain,
    Rejection,
    ScriptBrain,
    mint_token,
    verify_token,
)
from interlock.emulators._conversations import Conversations, conversation_not_found
from interlock.emulators._logprobs import MAX_TOP, with_logprobs
from interlock.emulators._mcp import answered, hosted_answer, unanswerable
from interlock.emulators._responses_state import StoredResponse, StoredResponses, with_ids
from interlock.emulators._service import EmulatedService, Incoming, rejected
from interlock.transcript import (
    ApprovalRequestPart,
    DecodeError,
    HostedToolPart,
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

TOKEN_KIND = "openai.reasoning"
"""The token kind of the encrypted reasoning an ``openai``-issuer emulator mints."""


def token_kind(issuer: str) -> str:
    """The token kind of ``issuer``'s encrypted reasoning (each vendor's own)."""
    return f"{issuer}.reasoning"


_UNPARSEABLE = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly.)"
)
_NOT_STORED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)


def _reject(
    status: int, message: str, *, param: str | None = "input", code: str | None = None
) -> Rejection:
    return Rejection(status=status, body=encode_error(status, message, code=code, param=param))


def _answer_settings(payload: JsonObject) -> Rejection | None:
    """Responses has no ``n`` (one answer per response); ``top_logprobs`` is 0 to 20."""
    if "n" in payload:
        return _reject(400, "Unknown parameter: 'n'.", param="n", code="unknown_parameter")
    top = payload.get("top_logprobs")
    if top is None:
        return None
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= MAX_TOP:
        message = (
            f"Invalid 'top_logprobs': expected an integer from 0 to {MAX_TOP}, "
            f"but got {json.dumps(top)} instead."
        )
        return _reject(400, message, param="top_logprobs", code="invalid_value")
    return None


@dataclass
class _Ledger:
    """Ids this emulator issued: item id → the reasoning id of its step (or ``None``)."""

    reasoning_of: dict[str, str | None] = field(default_factory=dict[str, str | None])


def _items(payload: JsonObject) -> list[JsonObject]:
    value = payload.get("input")
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return []
    return [cast(JsonObject, item) for item in value if isinstance(item, dict)]


def _type(item: JsonObject) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return str(kind)


class OpenAIResponsesEmulator(EmulatedService):
    """The emulated service; ``received`` lists the most recent request bodies in order.

    ``issuer`` is the vendor it stands for (``openai``, ``xai``…): its encrypted reasoning
    verifies only here, as each vendor's service decrypts only its own, and a non-default
    vendor's ids carry its name (``rs_emuxai000001_0``).
    """

    def __init__(
        self,
        brain: DefaultBrain | ScriptBrain | None = None,
        *,
        offload: bool = False,
        issuer: str = "openai",
    ) -> None:
        super().__init__(
            brain if brain is not None else DefaultBrain(call_prefix="call_resp"), offload=offload
        )
        self.stored = StoredResponses()
        """Responses created with ``store`` true (:mod:`._responses_state`)."""
        self.conversations = Conversations()
        """Conversations created with ``POST /v1/conversations`` (:mod:`._conversations`)."""
        self._ledger = _Ledger()
        self._counter = 0
        self.issuer = issuer
        self._token_kind = token_kind(issuer)
        self._stem = "emu" if issuer == "openai" else f"emu{issuer}"

    # ------------------------------------------------------------------ validation

    def validate(self, payload: JsonObject) -> Rejection | None:
        """The service's validation rules; ``None`` when the request is accepted."""
        rejection = _answer_settings(payload)
        if rejection is not None:
            return rejection
        previous = payload.get("previous_response_id")
        if previous is not None and payload.get("conversation") is not None:
            message = (
                "Mutually exclusive parameters: Ensure you are only providing one of: "
                "'previous_response_id' or 'conversation'."
            )
            return _reject(400, message, param=None, code="mutually_exclusive_parameters")
        if previous is not None and previous not in self.stored:
            message = f"Previous response with id '{previous}' not found."
            return _reject(
                400, message, param="previous_response_id", code="previous_response_not_found"
            )
        conversation = _conversation_id(payload)
        if conversation is not None and conversation not in self.conversations:
            status, body = conversation_not_found(conversation, "conversation")
            return Rejection(status=status, body=body)
        items = _items(payload)
        chain = self._context(payload)
        for check in (
            self._assistant_parts,
            self._duplicates,
            self._encrypted,
            self._reasoning_follow,
        ):
            rejection = check(items)
            if rejection is not None:
                return rejection
        rejection = self._ids(items, chain, store=payload.get("store") is not False)
        return rejection or self._pairing(chain + items) or _unanswerable(items, chain)

    def _context(self, payload: JsonObject) -> list[JsonObject]:
        """The stored items a request continues: its previous response's or conversation's."""
        previous = payload.get("previous_response_id")
        if previous is not None:
            return self.stored.chain(str(previous))
        conversation = _conversation_id(payload)
        return self.conversations.items(conversation) if conversation is not None else []

    def _assistant_parts(self, items: list[JsonObject]) -> Rejection | None:
        """Check 6: assistant content parts are ``output_text`` / ``refusal`` only."""
        for index, item in enumerate(items):
            content = item.get("content")
            if (
                _type(item) != "message"
                or item.get("role") != "assistant"
                or not isinstance(content, list)
            ):
                continue
            for position, part in enumerate(cast(list[JsonValue], content)):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind not in ("output_text", "refusal"):
                    message = f"Invalid value: '{kind}'. Supported values are: 'output_text' and 'refusal'."
                    param = f"input[{index}].content[{position}]"
                    return _reject(400, message, param=param, code="invalid_value")
        return None

    def _duplicates(self, items: list[JsonObject]) -> Rejection | None:
        """Check 2: no item id twice."""
        seen: set[str] = set()
        for item in items:
            item_id = item.get("id")
            if _type(item) == "item_reference" or not isinstance(item_id, str):
                continue
            if item_id in seen:
                message = f"Duplicate item found with id {item_id}. Remove duplicate items from your input and try again."
                return _reject(400, message)
            seen.add(item_id)
        return None

    def _encrypted(self, items: list[JsonObject]) -> Rejection | None:
        """Replayed encrypted reasoning must be genuine (``invalid_encrypted_content``)."""
        for item in items:
            blob = item.get("encrypted_content")
            if _type(item) != "reasoning" or blob is None:
                continue
            if not isinstance(blob, str) or not verify_token(self._token_kind, blob):
                item_id = item.get("id")
                if isinstance(item_id, str):
                    message = (
                        f"The encrypted content for item {item_id} could not be verified. "
                        "Reason: Encrypted content could not be decrypted or parsed."
                    )
                else:
                    message = f"The encrypted content {blob} could not be verified."
                return _reject(400, message, param=None, code="invalid_encrypted_content")
        return None

    def _reasoning_follow(self, items: list[JsonObject]) -> Rejection | None:
        """Check 3: a reasoning item is immediately followed by a model-output item."""
        for index, item in enumerate(items):
            if _type(item) != "reasoning":
                continue
            following = items[index + 1] if index + 1 < len(items) else None
            ok = following is not None and _type(following) not in (
                "reasoning",
                "function_call_output",
                "mcp_approval_response",
            )
            if ok and following is not None and _type(following) == "message":
                ok = following.get("role") == "assistant"
            if not ok:
                name = item.get("id", "")
                message = f"Item '{name}' of type 'reasoning' was provided without its required following item."
                return _reject(400, message)
        return None

    def _ids(
        self, items: list[JsonObject], chain: list[JsonObject], *, store: bool
    ) -> Rejection | None:
        """Checks 4–5: ids must resolve; a stepped item needs its reasoning; store=false needs blobs."""
        present = {str(item["id"]) for item in items + chain if isinstance(item.get("id"), str)}
        blobs = {
            str(item["id"])
            for item in items
            if _type(item) == "reasoning"
            and isinstance(item.get("id"), str)
            and item.get("encrypted_content")
        }
        for item in items:
            item_id = item.get("id")
            kind = _type(item)
            if not isinstance(item_id, str) or kind in ("item_reference", "function_call_output"):
                continue
            if kind == "message" and item.get("role") != "assistant":
                continue
            if item_id not in self._ledger.reasoning_of:
                return _reject(404, f"Item with id '{item_id}' not found.")
            reasoning = self._ledger.reasoning_of[item_id]
            unbacked = reasoning is None or reasoning not in blobs
            if not store and (item_id not in blobs if kind == "reasoning" else unbacked):
                return _reject(404, _NOT_STORED.format(id=item_id))
            if reasoning is not None and kind != "reasoning" and reasoning not in present:
                message = (
                    f"Item '{item_id}' of type '{kind}' was provided without its required "
                    f"'reasoning' item: '{reasoning}'."
                )
                return _reject(400, message)
        return None

    def _pairing(self, items: list[JsonObject]) -> Rejection | None:
        """Check 1: every call has an output and every output a call."""
        calls: list[str] = []
        outputs: set[str] = set()
        for item in items:
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                continue
            if _type(item) == "function_call":
                calls.append(call_id)
            elif _type(item) == "function_call_output":
                if call_id not in calls:
                    message = f"No tool call found for function call output with call_id {call_id}."
                    return _reject(400, message)
                outputs.add(call_id)
        for call_id in calls:
            if call_id not in outputs:
                return _reject(400, f"No tool output found for function call {call_id}.")
        return None

    # ------------------------------------------------------------------ answering

    def routes(self) -> list[BaseRoute]:
        """The service's paths: create, and the stored-response endpoints."""
        return [
            Route("/v1/responses", self.serve, methods=["POST"]),
            Route("/v1/responses/{response_id}", self.state, methods=["GET", "DELETE"]),
            Route("/v1/responses/{response_id}/input_items", self.state, methods=["GET"]),
            Route("/v1/responses/{response_id}/cancel", self.state, methods=["POST"]),
            Route("/v1/conversations", self.conversation, methods=["POST"]),
            Route(
                "/v1/conversations/{conversation_id}",
                self.conversation,
                methods=["GET", "POST", "DELETE"],
            ),
            Route(
                "/v1/conversations/{conversation_id}/items",
                self.conversation,
                methods=["GET", "POST"],
            ),
            Route(
                "/v1/conversations/{conversation_id}/items/{item_id}",
                self.conversation,
                methods=["GET", "DELETE"],
            ),
        ]

    async def state(self, http: HttpRequest) -> HttpResponse:
        """Retrieve, delete, cancel or list the input items of a stored response."""
        response_id = str(http.path_params["response_id"])
        query = dict(http.query_params)
        last = http.url.path.rsplit("/", 1)[-1]
        status, body = await self.alone(lambda: self._state(http.method, response_id, query, last))
        return JSONResponse(body, status_code=status)

    def _state(
        self, method: str, response_id: str, query: dict[str, str], last: str
    ) -> tuple[int, JsonObject]:
        if method == "DELETE":
            return self.stored.delete(response_id)
        if last == "cancel":
            return self.stored.cancel(response_id)
        if last == "input_items":
            return self.stored.input_items(response_id, query)
        return self.stored.retrieve(response_id)

    async def conversation(self, http: HttpRequest) -> HttpResponse:
        """The Conversations API (:mod:`._conversations`)."""
        path = {key: str(value) for key, value in http.path_params.items()}
        query = dict(http.query_params)
        body: JsonObject = {}
        if http.method == "POST":
            try:
                parsed: JsonValue = json.loads(await http.body() or b"{}")
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                return rejected(self.unparseable())
            body = parsed
        listing = http.url.path.endswith("/items")
        status, answer = await self.alone(
            lambda: self._conversation(http.method, path, query, body, listing=listing)
        )
        return JSONResponse(answer, status_code=status)

    def _conversation(
        self,
        method: str,
        path: dict[str, str],
        query: dict[str, str],
        body: JsonObject,
        *,
        listing: bool,
    ) -> tuple[int, JsonObject]:
        held = self.conversations
        conversation_id = path.get("conversation_id")
        if conversation_id is None:
            return held.create(body)
        item_id = path.get("item_id")
        if item_id is not None:
            return held.item(conversation_id, item_id, delete=method == "DELETE")
        if listing:
            if method == "POST":
                return held.add_items(conversation_id, body)
            return held.list_items(conversation_id, query)
        if method == "DELETE":
            return held.delete(conversation_id)
        if method == "POST":
            return held.update(conversation_id, body)
        return held.retrieve(conversation_id)

    def unparseable(self) -> Rejection:
        return _reject(400, _UNPARSEABLE, param=None)

    def check(self, payload: JsonObject, incoming: Incoming) -> Rejection | None:
        return self.validate(payload)

    def decode(self, payload: JsonObject, incoming: Incoming) -> Request:
        return decode_request(payload)

    def decode_failed(self, error: DecodeError) -> Rejection:
        return _reject(400, error.detail, param=error.path or None)

    def scripted_stream(
        self, events: list[JsonValue], request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        items = [cast(JsonObject, event) for event in events]
        if request.stream:
            return _sse([SseEvent(data=json.dumps(e), event=str(e.get("type"))) for e in items])
        decoder = StreamDecoder()
        updates = [u for e in items for u in decoder.feed(SseEvent(data=json.dumps(e)))]
        return JSONResponse(encode_response(fold_updates(updates)))

    def scripted_response(
        self, wire: JsonObject, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        return self._send(decode_response(wire), request, payload)

    def answer(
        self, response: Response, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        chain = self._context(payload)
        hosted = hosted_answer(
            request, chain + _items(payload), f"{self._stem}{self._counter + 1:06d}"
        )
        if hosted is not None:
            response = answered(hosted, response)
        include = payload.get("include")
        if isinstance(include, list) and LOGPROBS_INCLUDE in include:
            top = payload.get("top_logprobs")
            response = with_logprobs(response, top if isinstance(top, int) else 0)
        return self._send(self._finalize(response, request), request, payload)

    def _send(self, response: Response, request: Request, payload: JsonObject) -> HttpResponse:
        queued = self._remember(payload, response, background=not request.stream)
        if queued is not None:
            return JSONResponse(queued)
        if request.stream:
            encoder = StreamEncoder()
            events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
            return _sse(events + encoder.finish())
        return JSONResponse(encode_response(response))

    def _finalize(self, response: Response, request: Request) -> Response:
        """Own ids on every item, encrypted content on every reasoning item, summary on request."""
        self._counter += 1
        stem = f"{self._stem}{self._counter:06d}"
        parts: list[Part] = []
        reasoning_id: str | None = None
        for index, part in enumerate(response.message.parts):
            if isinstance(part, ReasoningPart):
                reasoning_id = f"rs_{stem}_{index}"
                if request.options.reasoning_summary is not None and part.text:
                    parts.append(replace(part, item_id=reasoning_id))
                blob = mint_token(self._token_kind, f"{stem}:{reasoning_id}")
                opaque = Opaque(provider=self.issuer, format=ENCRYPTED_FORMAT, data=blob)
                parts.append(
                    ReasoningPart(reasoning_kind="encrypted", opaque=opaque, item_id=reasoning_id)
                )
                self._ledger.reasoning_of[reasoning_id] = None
                continue
            if isinstance(part, TextPart | ToolCallPart):
                prefix = "fc" if isinstance(part, ToolCallPart) else "msg"
                item_id = f"{prefix}_{stem}_{index}"
                self._ledger.reasoning_of[item_id] = reasoning_id
                parts.append(replace(part, item_id=item_id))
                continue
            if isinstance(part, ApprovalRequestPart):
                self._ledger.reasoning_of[part.approval_id] = None
            elif isinstance(part, HostedToolPart) and isinstance(part.item.get("id"), str):
                self._ledger.reasoning_of[str(part.item["id"])] = None
            parts.append(part)
        message = Message(role="assistant", parts=tuple(parts))
        return replace(response, id=f"resp_{stem}", message=message)

    def _remember(
        self, body: JsonObject, response: Response, *, background: bool
    ) -> JsonObject | None:
        """Store the answer (and add it to its conversation); the queued response object
        when it is a (non-streamed) background one, else ``None``."""
        if body.get("store") is False or response.id is None:
            return None
        chain = self._context(body)
        encoded = encode_response(response)
        output = cast(list[JsonObject], encoded["output"])
        inputs = with_ids(chain + _items(body), response.id.removeprefix("resp_"))
        conversation = _conversation_id(body)
        if conversation is not None:
            self.conversations.append(conversation, inputs[len(chain) :] + output)
        stored = StoredResponse(items=inputs + output, inputs=inputs, response=encoded)
        if background and body.get("background") is True:
            return self.stored.keep_background(response.id, stored)
        self.stored.keep(response.id, stored)
        return None


def _conversation_id(payload: JsonObject) -> str | None:
    """The id of the request's ``conversation`` (a string or ``{"id": …}``), if any."""
    conversation = payload.get("conversation")
    if isinstance(conversation, dict):
        conversation = cast(JsonObject, conversation).get("id")
    return conversation if isinstance(conversation, str) else None


def _unanswerable(items: list[JsonObject], chain: list[JsonObject]) -> Rejection | None:
    """An ``mcp_approval_response`` must answer a request the service issued (:mod:`._mcp`)."""
    found = unanswerable(items, chain)
    if found is None:
        return None
    index, approval_id = found
    message = f"No approval request found with id '{approval_id}'."
    return _reject(400, message, param=f"input[{index}].approval_request_id")


def _sse(events: list[SseEvent]) -> StreamingResponse:
    async def body() -> AsyncIterator[str]:
        for event in events:
            yield format_sse(event.data, event.event)

    return StreamingResponse(body(), media_type="text/event-stream")


def create_app(emulator: OpenAIResponsesEmulator) -> Starlette:
    """A Starlette app serving ``emulator``."""
    return Starlette(routes=emulator.routes())


EMULATOR = OpenAIResponsesEmulator
"""This dialect's emulator class, found by :func:`interlock.emulators.create_emulator`."""

"""What every emulated service does with a request, whatever its dialect.

:class:`EmulatedService` holds the one request path of the emulators: read the body,
refuse what is not a JSON object, log it in :attr:`~EmulatedService.received`, check the
service's rules, decode it with the dialect's codec, then answer from the script (an
error, a stream trace, a response) or from the brain. A dialect supplies only the parts
that differ (its error strings, its rules, how it dresses and frames an answer).

Two properties hold for every dialect:

* ``received`` keeps the last :data:`RECEIVED_LIMIT` request bodies only, and no more
  than :data:`RECEIVED_BYTES` of them (the newest is always kept), so a long-running
  emulator's memory stays bounded, and so does the work of Python's full garbage
  collections, which walk every body held: 256 histories of 2,000 messages made
  pauses of 0.1–2.5 s, which benchmarks read as the gateway's latency tail;
* with ``offload=True`` (how the gateway mounts ``emulator://`` upstreams in its own
  process) everything after reading the body runs on a worker thread, one request at a
  time, so a slow request (a large prompt) never stalls the event loop it shares with the
  gateway. ``interlock emulate`` runs in its own process and answers on its loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar, cast

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.responses import Response as HttpResponse

from interlock.emulators._brain import DefaultBrain, Rejection, ScriptBrain
from interlock.transcript import DecodeError, JsonObject, JsonValue, Request, Response

_T = TypeVar("_T")

RECEIVED_LIMIT = 256
"""How many request bodies an emulator keeps in ``received`` (the most recent ones)."""


RECEIVED_BYTES = 4 * 1024 * 1024
"""How many bytes of request bodies ``received`` keeps at most (besides the newest)."""


class Received(list[JsonObject]):
    """A list of request bodies that keeps only the most recent: at most
    :data:`RECEIVED_LIMIT` of them, and at most :data:`RECEIVED_BYTES` of body bytes
    unless that would leave none (the newest is always kept).

    Invariant: ``_sizes`` holds the size of each body still held, oldest first (bodies
    added with plain ``append`` count as 0 bytes)."""

    def __init__(self) -> None:
        super().__init__()
        self._sizes: deque[int] = deque()
        self._bytes = 0

    def append(self, body: JsonObject) -> None:
        """Add ``body`` (of unknown size); the oldest go as :meth:`keep` says."""
        self.keep(body, 0)

    def keep(self, body: JsonObject, size: int) -> None:
        """Add ``body``, which arrived as ``size`` bytes; the oldest go while more than
        the limits are held."""
        super().append(body)
        self._sizes.append(size)
        self._bytes += size
        drop = 0
        while len(self) - drop > RECEIVED_LIMIT or (
            self._bytes > RECEIVED_BYTES and len(self) - drop > 1
        ):
            self._bytes -= self._sizes.popleft()
            drop += 1
        if drop:
            del self[:drop]


@dataclass(frozen=True, slots=True)
class Incoming:
    """One HTTP request as the emulator's synchronous part sees it (safe on any thread)."""

    body: bytes
    path: Mapping[str, str]
    query: Mapping[str, str]
    headers: Mapping[str, str]


def rejected(rejection: Rejection) -> HttpResponse:
    """A rejection as the service sends it."""
    return JSONResponse(rejection.body, status_code=rejection.status)


class EmulatedService(ABC):
    """The request path shared by every dialect's emulator (see the module docstring)."""

    def __init__(
        self, brain: DefaultBrain | ScriptBrain | None = None, *, offload: bool = False
    ) -> None:
        self.brain: DefaultBrain | ScriptBrain = brain if brain is not None else DefaultBrain()
        self._received = Received()
        self.received: list[JsonObject] = self._received
        """The most recent request bodies that parsed as JSON objects, oldest first."""
        self.offload = offload
        self._one_at_a_time = threading.Lock()

    # -- what a dialect supplies --------------------------------------------------------

    def precheck(self, incoming: Incoming) -> Rejection | None:
        """A refusal before the body is parsed (a missing header, an unknown method)."""
        del incoming
        return None

    @abstractmethod
    def unparseable(self) -> Rejection:
        """The service's answer to a body that is not a JSON object."""

    @abstractmethod
    def check(self, payload: JsonObject, incoming: Incoming) -> Rejection | None:
        """The service's validation rules, in the order it reports them."""

    @abstractmethod
    def decode(self, payload: JsonObject, incoming: Incoming) -> Request:
        """The canonical request (raises :class:`DecodeError`)."""

    @abstractmethod
    def decode_failed(self, error: DecodeError) -> Rejection:
        """The service's 400 for a body its codec cannot decode."""

    @abstractmethod
    def scripted_stream(
        self, events: list[JsonValue], request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        """A scripted stream trace: sent as is when streaming, folded otherwise."""

    @abstractmethod
    def scripted_response(
        self, wire: JsonObject, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        """A scripted wire response: sent as is, or streamed when the request streams."""

    @abstractmethod
    def answer(
        self, response: Response, request: Request, payload: JsonObject, incoming: Incoming
    ) -> HttpResponse:
        """The brain's answer, dressed as the service would and framed per request."""

    # -- the shared path ----------------------------------------------------------------

    async def serve(self, http: HttpRequest) -> HttpResponse:
        """Answer one HTTP request (on a worker thread when ``offload``)."""
        incoming = Incoming(
            body=await http.body(),
            path={key: str(value) for key, value in http.path_params.items()},
            query=dict(http.query_params),
            headers=dict(http.headers),
        )
        return await self.alone(lambda: self.respond(incoming))

    async def alone(self, work: Callable[[], _T]) -> _T:
        """``work`` run as requests are: with ``offload``, on a worker thread, one at a time
        (so it never races a request for the emulator's state)."""
        if self.offload:
            return await asyncio.to_thread(self._alone, work)
        return work()

    def _alone(self, work: Callable[[], _T]) -> _T:
        with self._one_at_a_time:
            return work()

    def parse(self, incoming: Incoming) -> JsonObject | Rejection:
        """The body as a JSON object, or the service's refusal (nothing is logged)."""
        refusal = self.precheck(incoming)
        if refusal is not None:
            return refusal
        try:
            payload = json.loads(incoming.body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return self.unparseable()
        if not isinstance(payload, dict):
            return self.unparseable()
        return cast(JsonObject, payload)

    def respond(self, incoming: Incoming) -> HttpResponse:
        """Parse, log, check, decode, answer: the service's whole synchronous part."""
        payload = self.parse(incoming)
        if isinstance(payload, Rejection):
            return rejected(payload)
        self._received.keep(payload, len(incoming.body))
        rejection = self.check(payload, incoming)
        if rejection is not None:
            return rejected(rejection)
        try:
            request = self.decode(payload, incoming)
        except DecodeError as error:
            return rejected(self.decode_failed(error))
        entry = self.brain.next_entry() if isinstance(self.brain, ScriptBrain) else None
        if entry is not None and "error" in entry:
            error = cast(JsonObject, entry["error"])
            return JSONResponse(error.get("body"), status_code=cast(int, error.get("status", 500)))
        if entry is not None and "stream" in entry:
            events = cast(list[JsonValue], entry["stream"])
            return self.scripted_stream(events, request, payload, incoming)
        if entry is not None and "response" in entry:
            wire = cast(JsonObject, entry["response"])
            return self.scripted_response(wire, request, payload, incoming)
        brain = self.brain.fallback if isinstance(self.brain, ScriptBrain) else self.brain
        return self.answer(brain.respond(request), request, payload, incoming)


def fan_out(body: JsonObject, key: str, count: int) -> JsonObject:
    """``body`` with its one list ``key`` (``choices``, ``candidates``) repeated ``count`` times,
    each copy re-indexed: the emulated model answers every requested choice the same way."""
    listed = body.get(key)
    if count == 1 or not isinstance(listed, list):
        return body
    copies: list[JsonValue] = [
        {**item, "index": index}
        for index in range(count)
        for item in listed
        if isinstance(item, dict)
    ]
    return {**body, key: copies}

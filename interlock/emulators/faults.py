"""Emulators that fail on command: an ASGI wrapper answering chosen requests with a fault.

:class:`FaultyApp` wraps an emulator app (one emulator or the combined one). Faults are
queued with :meth:`FaultyApp.fail` and used up in order by the requests they match
(``model``: the body's ``model`` or the model in a Gemini path; ``None``: any request):

* ``status``: an error answer with that status (429, 500, 503…), in the error shape of the
  dialect the path belongs to, with ``retry-after`` when given; the emulator never sees
  the request;
* ``stream_error``: a 200 stream whose first event is the dialect's error event with that
  status (Anthropic's ``overloaded_error`` for 529, ``rate_limit_error`` for 429), as
  services do when they fail after accepting a streamed request;
* ``drop_after``: the emulator answers, and the connection is dropped after that many body
  messages of its answer (0: right after the status line and headers). Under a real
  server (uvicorn) the client sees a 200 whose body breaks off; a streamed answer stops
  after that many events.

Every request is counted by model in :attr:`FaultyApp.seen`, faulted or not, so a test
sees where a gateway sent what. Thread-safe: tests queue faults from another thread than
the server's.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interlock.codecs._sse import format_sse
from interlock.codecs.registry import DialectName, wire_codec
from interlock.transcript import StreamFailed

_STATUS_WORDS = {
    429: "rate limit exceeded",
    500: "internal error",
    503: "overloaded",
    529: "overloaded",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One failure to inject into the next request it matches."""

    status: int = 500
    drop_after: int | None = None
    """Drop the connection after this many body messages instead of answering ``status``."""
    stream_error: bool = False
    """Answer a 200 stream whose first event is an error with ``status``."""
    retry_after: str | None = None
    model: str | None = None


class _Dropped(Exception):
    """Raised inside the server to make it drop the connection mid-answer."""


class FaultyApp:
    """An emulator app that fails the requests matching queued :class:`Fault` s."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.pending: list[Fault] = []
        self.seen: Counter[str] = Counter()
        self.injected = 0
        self._lock = threading.Lock()

    def fail(self, fault: Fault, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` matching requests."""
        with self._lock:
            self.pending.extend([fault] * times)

    def reset(self) -> None:
        """Forget queued faults and counts."""
        with self._lock:
            self.pending.clear()
            self.seen.clear()
            self.injected = 0

    def _take(self, model: str) -> Fault | None:
        with self._lock:
            self.seen[model] += 1
            for index, fault in enumerate(self.pending):
                if fault.model is None or fault.model == model:
                    self.injected += 1
                    return self.pending.pop(index)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await _read(receive)
        path = str(scope.get("path", ""))
        fault = self._take(_model(path, body))
        replay = _replay(body)
        if fault is None:
            await self.app(scope, replay, send)
        elif fault.stream_error:
            await _stream_error(send, fault, path)
        elif fault.drop_after is None:
            await _error(send, fault, path)
        else:
            await self.app(scope, replay, _dropping(send, fault.drop_after))


async def _read(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _model(path: str, body: bytes) -> str:
    """The request's model: a Gemini path's, else the body's ``model`` ('' if none)."""
    if "/models/" in path:
        return path.rsplit("/models/", 1)[1].partition(":")[0]
    try:
        payload: object = json.loads(body)
    except ValueError:
        return ""
    model = payload.get("model") if isinstance(payload, dict) else None  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType] -- any JSON
    return model if isinstance(model, str) else ""


def _dialect(path: str) -> DialectName:
    if "/models/" in path:
        return "gemini"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


async def _error(send: Send, fault: Fault, path: str) -> None:
    message = f"emulated fault: {_STATUS_WORDS.get(fault.status, 'error')}"
    payload = wire_codec(_dialect(path)).encode_error(fault.status, message)
    headers = [(b"content-type", b"application/json")]
    if fault.retry_after is not None:
        headers.append((b"retry-after", fault.retry_after.encode()))
    await send({"type": "http.response.start", "status": fault.status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


_ERROR_TYPES = {429: "rate_limit_error", 529: "overloaded_error"}


async def _stream_error(send: Send, fault: Fault, path: str) -> None:
    failed = StreamFailed(
        code=_ERROR_TYPES.get(fault.status, "api_error"),
        message=f"emulated fault: {_STATUS_WORDS.get(fault.status, 'error')}",
        status=fault.status,
    )
    encoder = wire_codec(_dialect(path)).stream_encoder()
    events = encoder.encode(failed)
    body = "".join(format_sse(event.data, event.event) for event in events).encode()
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _dropping(send: Send, after: int) -> Send:
    """A ``send`` that passes the head and ``after`` body messages, then drops."""
    passed = 0

    async def dropping(message: Message) -> None:
        nonlocal passed
        if message["type"] == "http.response.body" and message.get("body"):
            if passed >= after:
                raise _Dropped(f"emulated fault: connection dropped after {after} body messages")
            passed += 1
        await send(message)

    return dropping

"""Noticing that a client went away, in every mode of a proxied request.

Once the request body has been read, ``receive`` has nothing left to say but
``http.disconnect``. :class:`ClientWatch` waits for it in a plain task and cancels the
request's own task: whatever it is awaiting (the upstream's answer head, a non-streamed
body, the next chunk of a stream) stops, and the upstream connection is closed by the
cancellation's cleanup, so an abandoned answer is not produced, and paid for, to the end.

For a request whose answer is not streamed, the watching task starts :data:`WATCH_AFTER`
seconds after the body was read (one timer until then), so a request answered sooner
never creates it: the task, its first step and its cancellation cost more than the timer
(per small proxied request, 6-14k user-space instructions, 0.5-0.8 %, and 2.8 of 18.8
system calls: an event-loop turn's ``epoll_pwait`` and the ``getpid`` that CPython 3.11's
``asyncio.get_running_loop`` makes on every call; ``docs/benchmarks/small.md``). A client
that leaves during those first seconds is noticed when the watch starts (``receive`` then
reports the disconnect at once). A streamed answer is watched from the start: a stream
would otherwise keep reading the upstream for that long after its client left, and the
task's cost is small beside a stream's.

Served by the gateway's own HTTP protocol (``interlock serve``), a request whose answer
is not streamed needs no task and no timer at all: the request cycle (``receive``'s
owner, :class:`~interlock.gateway.http_protocol.GatewayCycle`) calls the watch back from
the connection's ``connection_lost`` when the client left before the answer was complete,
and the watch cancels the request then, whenever that is; once the answer has started
(a non-streamed answer is in memory and goes out in one piece) it is not cancelled.

Starlette's ``StreamingResponse`` watches too, but under ASGI < 2.4 (uvicorn says 2.3) it
opens an anyio task group per response and moves the stream into a new task, a
scheduling round before the first byte can leave; and it covers only the streaming part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, cast

from starlette.types import Message, Receive, Send

WATCH_AFTER = 0.05
"""Seconds from the end of the request body until the watching task starts."""


class DisconnectNotifier(Protocol):
    """A request cycle that calls ``on_disconnect`` (once) when its client leaves before
    the answer is complete; ``notifies_disconnect`` marks the class."""

    notifies_disconnect: bool
    on_disconnect: Callable[[], None] | None
    response_started: bool
    task: asyncio.Task[None] | None
    """The task serving the request (``None``: not known, ask asyncio)."""


def notifier_of(receive: Receive) -> DisconnectNotifier | None:
    """The request cycle behind ``receive`` if it notifies disconnects itself."""
    owner: object = getattr(receive, "__self__", None)
    if getattr(type(owner), "notifies_disconnect", False):
        return cast(DisconnectNotifier, owner)
    return None


class ClientWatch:
    """Cancels the current task when the client disconnects (see the module docstring).

    Invariants: :attr:`gone` is True only when ``http.disconnect`` arrived before the
    response was complete; the task is cancelled at most once, and only then.
    """

    __slots__ = ("_complete", "_notifier", "_task", "_timer", "_watcher", "gone")

    def __init__(self) -> None:
        self.gone = False
        self._complete = False
        self._task: asyncio.Task[object] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._notifier: DisconnectNotifier | None = None

    def start(self, receive: Receive, *, streamed: bool) -> None:
        """Watch from now on when the answer is ``streamed`` or the request cycle
        notifies disconnects, else from :data:`WATCH_AFTER` seconds on (call after the
        request body was read)."""
        if self._task is not None:
            return
        notifier = None if streamed else notifier_of(receive)
        if notifier is not None:
            task = notifier.task or asyncio.current_task()
            assert task is not None, "ASGI apps run in a task"
            self._task, self._notifier = task, notifier
            notifier.on_disconnect = self._left
            return
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None, "ASGI apps run in a task"
        self._task = task
        if streamed:
            self._begin(loop, receive)
        else:
            self._timer = loop.call_later(WATCH_AFTER, self._begin, loop, receive)

    def _begin(self, loop: asyncio.AbstractEventLoop, receive: Receive) -> None:
        self._timer = None
        if not self._complete:
            self._watcher = loop.create_task(self._watch(receive))

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        if not self._complete and self._task is not None:
            self.gone = True
            self._task.cancel()

    def _left(self) -> None:
        """The cycle's client left before the answer was complete."""
        notifier = self._notifier
        if notifier is not None and not notifier.response_started and self._task is not None:
            self.gone = True
            self._task.cancel()

    def sender(self, send: Send) -> Send:
        """``send``, noting when the response is complete (a later disconnect is normal);
        ``send`` itself when the request cycle notifies disconnects."""
        if self._notifier is not None:
            return send

        async def tracked(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self._complete = True
            await send(message)

        return tracked

    def absorb(self) -> None:
        """After catching the cancellation this watch caused: the task runs on normally."""
        assert self.gone and self._task is not None
        self._task.uncancel()

    def stop(self) -> None:
        """Stop watching (or never start)."""
        if self._notifier is not None:
            self._notifier.on_disconnect = None
            self._notifier = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

"""Noticing that a client went away, in every mode of a proxied request.

Once the request body has been read, ``receive`` has nothing left to say but
``http.disconnect``. :class:`ClientWatch` waits for it in a plain task and cancels the
request's own task: whatever it is awaiting (the upstream's answer head, a non-streamed
body, the next chunk of a stream) stops, and the upstream connection is closed by the
cancellation's cleanup, so an abandoned answer is not produced, and paid for, to the end.

Starlette's ``StreamingResponse`` watches too, but under ASGI < 2.4 (uvicorn says 2.3) it
opens an anyio task group per response and moves the stream into a new task, a
scheduling round before the first byte can leave; and it covers only the streaming part.
"""

from __future__ import annotations

import asyncio

from starlette.types import Message, Receive, Send


class ClientWatch:
    """Cancels the current task when the client disconnects (see the module docstring).

    Invariants: :attr:`gone` is True only when ``http.disconnect`` arrived before the
    response was complete; the task is cancelled at most once, and only then.
    """

    __slots__ = ("_complete", "_task", "_watcher", "gone")

    def __init__(self) -> None:
        self.gone = False
        self._complete = False
        self._task: asyncio.Task[object] | None = None
        self._watcher: asyncio.Task[None] | None = None

    def start(self, receive: Receive) -> None:
        """Watch from now on (call after the request body was read)."""
        if self._watcher is not None:
            return
        task = asyncio.current_task()
        assert task is not None, "ASGI apps run in a task"
        self._task = task
        self._watcher = asyncio.get_running_loop().create_task(self._watch(receive))

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        if not self._complete and self._task is not None:
            self.gone = True
            self._task.cancel()

    def sender(self, send: Send) -> Send:
        """``send``, noting when the response is complete (a later disconnect is normal)."""

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
        """Stop watching."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

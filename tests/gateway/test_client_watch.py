"""When the client watch starts: at once for a streamed answer, after ``WATCH_AFTER`` otherwise.

The cancellation itself (a client leaving mid-request, streamed or not, through
``interlock serve`` and in process) is tested in ``test_transport_faults.py`` and
``test_streaming.py``; here, what a request answered quickly does not pay for.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from starlette.types import Message, Scope

from interlock.gateway import client_watch
from interlock.gateway.app import create_app
from interlock.gateway.client_watch import ClientWatch
from tests.gateway.helpers import Recorder, chat_chunks, chat_completion, gateway, sse


def _scope() -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"localhost"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8787),
    }


@pytest.mark.parametrize(("stream", "watching"), [(False, 0), (True, 1)])
async def test_only_a_streamed_answer_is_watched_from_the_start(
    stream: bool, watching: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the upstream is called, a watching task exists for a stream only (a
    non-streamed request answered within ``WATCH_AFTER`` never creates one)."""
    monkeypatch.setattr(client_watch, "WATCH_AFTER", 3600.0)  # never, within this test
    tasks_seen: list[int] = []

    def answer(_: httpx.Request) -> httpx.Response:
        tasks_seen.append(len(asyncio.all_tasks()) - 2)  # besides the test and the request
        if stream:
            return httpx.Response(200, content=sse(chat_chunks(), done=True))
        return httpx.Response(200, json=chat_completion("hi"))

    app = create_app(gateway({"chat": Recorder(answer)}))
    body = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    received: list[Message] = []
    sent: list[Message] = []

    async def receive() -> Message:
        if not received:
            received.append({"type": "http.request", "body": json.dumps(body).encode()})
            return received[-1]
        await asyncio.Event().wait()  # the client stays: only a watch ever waits here
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await asyncio.create_task(app(_scope(), receive, send))
    assert sent[0]["status"] == 200
    assert tasks_seen == [watching]
    assert [task for task in asyncio.all_tasks() if task is not asyncio.current_task()] == []


async def test_a_client_gone_during_the_delay_is_noticed_when_the_watch_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client left before the watch began: the watch cancels the request as soon as
    it starts, and says the client is gone."""
    monkeypatch.setattr(client_watch, "WATCH_AFTER", 0.0)
    watch = ClientWatch()

    async def receive() -> Message:
        return {"type": "http.disconnect"}  # already gone

    async def request() -> str:
        watch.start(receive, streamed=False)
        try:
            await asyncio.Event().wait()  # the upstream "thinks" forever
        except asyncio.CancelledError:
            assert watch.gone
            watch.absorb()
            return "cancelled by the watch"
        finally:
            watch.stop()
        return "not cancelled"

    assert await asyncio.wait_for(request(), 10) == "cancelled by the watch"


async def test_stop_before_the_delay_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_watch, "WATCH_AFTER", 0.01)
    calls: list[str] = []

    async def receive() -> Message:
        calls.append("receive")
        return {"type": "http.disconnect"}

    async def request() -> None:
        watch = ClientWatch()
        watch.start(receive, streamed=False)
        watch.stop()
        await asyncio.sleep(0.05)  # past the delay: the cancelled timer never fires

    await request()
    assert calls == []

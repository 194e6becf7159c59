"""App assembly: lifespan work around the routes."""

from __future__ import annotations

import asyncio
import gc

from starlette.types import Message

from interlock.gateway.app import GATEWAY_GC_THRESHOLDS, create_app
from tests.gateway.helpers import gateway


async def test_startup_freezes_what_exists_so_collections_skip_it() -> None:
    app = create_app(gateway({}))
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    outbox: list[Message] = []

    serving: list[tuple[int, int, int]] = []
    before = gc.get_threshold()

    async def send(message: Message) -> None:
        outbox.append(message)
        if message["type"] == "lifespan.startup.complete":
            serving.append(gc.get_threshold())

    await inbox.put({"type": "lifespan.startup"})
    await inbox.put({"type": "lifespan.shutdown"})
    try:
        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert serving == [GATEWAY_GC_THRESHOLDS] != [before]  # a larger young generation
    assert gc.get_threshold() == before  # given back when the app stops
    assert [message["type"] for message in outbox] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]

"""``emulator://`` upstreams share the gateway's process but not its event loop: a slow
emulated answer leaves every other request (``/healthz`` here) served meanwhile."""

from __future__ import annotations

import asyncio
import threading

import httpx

from interlock.emulators import DefaultBrain
from interlock.emulators._service import EmulatedService
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store
from interlock.transcript import Request, Response

CONFIG = """
[store]
url = "memory://"

[[upstreams]]
name = "emulated"
protocol = "openai-chat"
base_url = "emulator://openai-chat"

[[models]]
name = "slow"
upstream = "emulated"
model = "m"
"""


class HeldBrain(DefaultBrain):
    """Answers only once released: stands for an emulated request that takes long (CPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.released_in_time = False

    def respond(self, request: Request) -> Response:
        self.entered.set()
        self.released_in_time = self.release.wait(timeout=60)  # blocks whichever thread runs it
        return super().respond(request)


async def test_a_held_emulated_answer_does_not_hold_the_gateway() -> None:
    built = build_gateway(parse_config(CONFIG, {}), store=open_store("memory://"))
    emulator = built.emulators["emulated"]
    assert isinstance(emulator, EmulatedService)
    brain = HeldBrain()
    emulator.brain = brain
    transport = httpx.ASGITransport(app=create_app(built))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        body = {"model": "slow", "messages": [{"role": "user", "content": "hi"}]}
        answer = asyncio.create_task(client.post("/v1/chat/completions", json=body))
        assert await asyncio.to_thread(brain.entered.wait, 60)
        health = await client.get("/healthz")  # served while the emulator is still busy
        assert health.status_code == 200
        brain.release.set()
        response = await answer
    assert brain.released_in_time, "the gateway answered /healthz only after the emulator"
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "You said: hi"

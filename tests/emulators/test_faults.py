"""Emulators failing on command: status faults in each dialect's error shape, by model.

Dropped connections need a real server; ``tests/gateway/test_serve_routing.py`` drives
them through uvicorn.
"""

from __future__ import annotations

import httpx

from interlock.emulators import create_emulator, emulator_app
from interlock.emulators.faults import Fault, FaultyApp

CHAT = {"model": "m-a", "messages": [{"role": "user", "content": "hi"}]}


def _app() -> FaultyApp:
    emulators = [
        create_emulator(protocol)
        for protocol in ("openai-chat", "openai-responses", "gemini", "anthropic")
    ]
    return FaultyApp(emulator_app(*emulators))


async def test_faults_are_used_in_order_by_the_requests_they_match() -> None:
    app = _app()
    app.fail(Fault(status=429, retry_after="2", model="m-b"))
    app.fail(Fault(status=500), times=2)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://emulator"
    ) as http:
        statuses = [
            (await http.post("/v1/chat/completions", json={**CHAT, "model": model})).status_code
            for model in ("m-a", "m-a", "m-a", "m-b", "m-b")
        ]
        limited = app.injected
    assert statuses == [500, 500, 200, 429, 200]
    assert limited == 3 and not app.pending
    assert app.seen == {"m-a": 3, "m-b": 2}


async def test_a_status_fault_answers_in_the_dialect_of_its_path() -> None:
    app = _app()
    app.fail(Fault(status=503), times=3)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://emulator"
    ) as http:
        gemini = await http.post(
            "/v1beta/models/gemini-3-flash:generateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
        claude = await http.post(
            "/v1/messages",
            json={
                "model": "claude",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        chat = await http.post("/v1/chat/completions", json=CHAT)
    assert gemini.json()["error"]["status"] == "UNAVAILABLE"
    assert claude.json()["type"] == "error"
    assert chat.json()["error"]["message"] == "emulated fault: overloaded"
    assert app.seen == {"gemini-3-flash": 1, "claude": 1, "m-a": 1}

"""The lifecycle state machine and the drain gate, in-process (the drain of a real
``interlock serve`` process under SIGTERM is in ``tests/deployment/test_drain.py``)."""

from __future__ import annotations

import httpx
import pytest

from interlock.gateway.app import create_app
from interlock.gateway.lifecycle import REFUSED_CODE, DrainGate, Lifecycle
from interlock.gateway.server import find_lifecycle
from tests.gateway.helpers import gateway


class Work:
    """A participant that stays busy until told to stop (or finished by the test)."""

    def __init__(self) -> None:
        self.busy = True
        self.told: list[str] = []

    def draining(self) -> None:
        self.told.append("draining")

    def stop(self) -> None:
        self.told.append("stop")
        self.busy = False


async def test_an_idle_replica_drains_at_once_and_only_moves_forward() -> None:
    lifecycle = Lifecycle()
    assert lifecycle.accepting and lifecycle.state == "serving"
    report = await lifecycle.drain()
    assert report.stopped == 0
    assert lifecycle.state == "stopped" and not lifecycle.accepting
    await lifecycle.drain()
    assert lifecycle.state == "stopped"


async def test_work_past_the_deadline_is_stopped_once() -> None:
    lifecycle = Lifecycle(drain_seconds=0)
    busy, finished = Work(), Work()
    lifecycle.join(busy)
    leave = lifecycle.join(finished)
    finished.busy = False
    leave()
    report = await lifecycle.drain()
    assert report.stopped == 1
    assert busy.told == ["draining", "stop"]
    assert finished.told == []


async def test_work_that_ends_in_time_is_never_stopped() -> None:
    lifecycle = Lifecycle(drain_seconds=60)
    work = Work()
    lifecycle.join(work)

    class Finisher:
        busy = False

        def draining(self) -> None:
            work.busy = False

        def stop(self) -> None:
            raise AssertionError("nothing was left to stop")

    lifecycle.join(Finisher())
    report = await lifecycle.drain()
    assert report.stopped == 0 and work.told == ["draining"]


async def test_joining_a_draining_replica_is_told_at_once() -> None:
    lifecycle = Lifecycle()
    await lifecycle.drain()
    late = Work()
    lifecycle.join(late)
    assert late.told == ["draining"]


@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/v1/chat/completions", "openai"),
        ("/v1/responses", "openai"),
        ("/v1beta/models/to-gemini:generateContent", "gemini"),
        ("/agui/assistant", "plain"),
    ],
)
async def test_a_draining_gateway_refuses_in_each_apis_shape(path: str, shape: str) -> None:
    app = create_app(gateway({}))
    lifecycle = find_lifecycle(app)
    assert lifecycle is not None
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        assert (await client.get("/readyz")).json() == {"status": "ready"}
        await lifecycle.drain()
        refused = await client.post(path, json={})
        ready = await client.get("/readyz")
        live = await client.get("/livez")
        metrics = await client.get("/metrics")
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1" and refused.headers["connection"] == "close"
    error = refused.json()["error"]
    if shape == "gemini":
        assert error["status"] == "UNAVAILABLE" and error["code"] == 503
    else:
        assert error["code"] == REFUSED_CODE
    if shape == "openai":
        assert error["type"]  # the OpenAI error object always has a type
    assert ready.status_code == 503 and ready.json() == {"status": "stopped"}
    assert live.status_code == 200 and metrics.status_code == 200


async def test_the_gate_counts_requests_in_flight() -> None:
    lifecycle = Lifecycle()
    seen: list[int] = []

    async def app(scope: object, receive: object, send: object) -> None:
        seen.append(lifecycle.requests)

    gate = DrainGate(app, lifecycle)
    await gate({"type": "http", "path": "/v1/x"}, None, None)  # type: ignore[arg-type]  # the app ignores both
    await gate({"type": "http", "path": "/livez"}, None, None)  # type: ignore[arg-type]  # the app ignores both
    assert seen == [1, 0] and lifecycle.requests == 0


def test_find_lifecycle_looks_through_middleware() -> None:
    app = create_app(gateway({}))

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.app = inner

    assert find_lifecycle(Wrapper(Wrapper(app))) is app.state.gateway.lifecycle
    assert find_lifecycle(object()) is None

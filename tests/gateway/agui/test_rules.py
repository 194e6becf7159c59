"""Standing approval rules from an AG-UI client's side, over real HTTP (SSE) and WebSocket.

A ``resume`` payload ``{"approved": true, "remember": "tool" | "arguments"}`` approves the
call and makes a rule: later calls of that tool (or with exactly those arguments) in the
same thread run without an interrupt, once each. Rules are scoped by tenant (API key) and
thread, and are kept in the store (a SQLite file, a redis-server).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.agui.counted import executions
from tests.gateway.agui.harness import (
    new_id,
    of_type,
    resume_all,
    run_input,
    run_over,
    user,
)
from tests.gateway.agui.processes import Cluster, Process, store_url
from tests.gateway.serving import emulators_on_loopback, stop

KEYS = {"alice": "key-alice-0123456789", "bob": "key-bob-0123456789"}


@dataclass
class Keyed(Process):
    """The gateway, and where its tools count their executions."""

    counts: Path


def deletions(server: Keyed, path: str) -> int:
    return executions(server.counts, "delete_file", path)


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Keyed]:
    """One ``interlock serve`` with two tenants' keys, on a SQLite file or a redis-server."""
    directory: Path = tmp_path_factory.mktemp(f"agui-rules-{request.param}")
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    with emulators_on_loopback() as (upstream, _):
        cluster = Cluster(directory, store_url(request.param, directory, redis), upstream)
        keys = ", ".join(f'{{key = "{key}", tenant = "{tenant}"}}' for tenant, key in KEYS.items())
        text = (
            cluster.config()
            .read_text()
            .replace("[server]\n", f"[server]\napi_keys = [{keys}]\n", 1)
        )
        (directory / "keys.toml").write_text(text)
        process = cluster.start(config="keys.toml")
        try:
            yield Keyed(process.process, process.port, cluster.counts)
        finally:
            stop(process.process)


async def send(
    server: Keyed, body: dict[str, Any], transport: str, tenant: str = "alice"
) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {KEYS[tenant]}"}
    return await run_over(server, body, transport, headers=headers)


def delete(path: str) -> dict[str, Any]:
    return user(f'call delete_file with {{"path":"{path}"}}')


async def ask(server: Keyed, thread: str, path: str, transport: str, tenant: str = "alice") -> str:
    """One turn asking to delete ``path``: ``"interrupt"`` or ``"ran"`` (no interrupt)."""
    events = await send(server, run_input(thread, [delete(path)]), transport, tenant)
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED", finished
    if finished["outcome"]["type"] == "interrupt":
        assert of_type(events, "TOOL_CALL_RESULT") == []
        return "interrupt"
    assert [r["content"] for r in of_type(events, "TOOL_CALL_RESULT")] == [f"deleted {path}"]
    return "ran"


async def approve(
    server: Keyed, thread: str, path: str, transport: str, remember: str | None
) -> None:
    events = await send(server, run_input(thread, [delete(path)]), transport)
    payload: dict[str, Any] = {"approved": True}
    if remember is not None:
        payload["remember"] = remember
    resumed = await send(
        server, run_input(thread, resume=resume_all(events[-1], payload)), transport
    )
    assert resumed[-1]["type"] == "RUN_FINISHED" and resumed[-1]["outcome"] == {"type": "success"}


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_remember_the_tool_approves_later_calls_in_that_thread_only(
    server: Keyed, transport: str
) -> None:
    thread, other = new_id("t"), new_id("t")
    paths = [new_id("p") for _ in range(4)]
    await approve(server, thread, paths[0], transport, "tool")
    assert await ask(server, thread, paths[1], transport) == "ran"
    assert await ask(server, other, paths[2], transport) == "interrupt"  # another thread
    assert await ask(server, thread, paths[3], transport, tenant="bob") == "interrupt"
    runs = [deletions(server, path) for path in paths]
    assert runs == [1, 1, 0, 0]


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_remember_the_arguments_approves_only_those_arguments(
    server: Keyed, transport: str
) -> None:
    thread, same, other = new_id("t"), new_id("p"), new_id("p")
    await approve(server, thread, same, transport, "arguments")
    assert await ask(server, thread, same, transport) == "ran"
    assert await ask(server, thread, other, transport) == "interrupt"
    assert (deletions(server, same), deletions(server, other)) == (2, 0)


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_approval_without_remember_makes_no_rule(server: Keyed, transport: str) -> None:
    thread, first, second = new_id("t"), new_id("p"), new_id("p")
    await approve(server, thread, first, transport, None)
    assert await ask(server, thread, second, transport) == "interrupt"


async def test_remember_on_a_rejection_is_refused_and_nothing_runs(server: Keyed) -> None:
    """Over SSE the bad payload is a 400 naming the field; the thread is not stuck."""
    thread, path = new_id("t"), new_id("p")
    events = await send(server, run_input(thread, [delete(path)]), "sse")
    payload = {"approved": False, "remember": "tool"}
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(
            f"{server.url}/agui/assistant",
            json=run_input(thread, resume=resume_all(events[-1], payload)),
            headers={"Authorization": f"Bearer {KEYS['alice']}"},
        )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "resume[0].payload.remember"
    assert deletions(server, path) == 0
    approved = resume_all(events[-1], {"approved": True})
    resumed = await send(server, run_input(thread, resume=approved), "sse")
    assert resumed[-1]["outcome"] == {"type": "success"}
    assert deletions(server, path) == 1

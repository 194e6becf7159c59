"""A corrupted (hand-edited) stored thread is refused by name, never half-loaded."""

from __future__ import annotations

from pathlib import Path

from interlock.gateway.stores import open_store, store_key
from tests.gateway.agui.harness import (
    binding_for,
    make_gateway,
    new_id,
    open_socket,
    run_input,
    running,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS


async def test_a_corrupted_thread_gives_thread_corrupt_and_runs_nothing(tmp_path: Path) -> None:
    database = tmp_path / "state.db"
    thread, city = new_id("t"), new_id("corrupt")
    editor = open_store(f"sqlite:///{database}")
    try:
        key = store_key("thread", "default", thread)
        await editor.backend.set_many({key: '{"transcript": {"version": 1, "messages": 5}}'})
    finally:
        await editor.close()
    gateway = make_gateway(str(tmp_path), store=f"sqlite:///{database}")
    with running(binding_for(gateway)) as server:
        async with open_socket(server) as socket:
            ask = user(f'call get_weather with {{"city":"{city}"}}')
            events = await socket.run(run_input(thread, [ask]))
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "THREAD_CORRUPT"
    assert events[-1]["message"].startswith(f"stored thread {thread!r} is corrupted: ")
    assert EXECUTIONS["get_weather", city] == 0

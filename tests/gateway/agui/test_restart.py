"""Approvals and the execution journal live in SQLite: a restart between the approval
request and the resume still executes the tool exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from interlock.emulators import create_emulator, emulator_app
from tests.gateway.agui.harness import (
    binding_for,
    make_gateway,
    new_id,
    of_type,
    open_socket,
    resume_all,
    run_input,
    running,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS

PROVIDER = create_emulator("openai-responses")
"""The upstream service: it outlives every gateway restart, as a real provider would."""


async def run_once(state_dir: Path, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One run on a freshly started gateway over the same SQLite file and seal key."""
    gateway = make_gateway(
        str(state_dir),
        store=f"sqlite:///{state_dir / 'interlock.db'}",
        upstream=httpx.ASGITransport(app=emulator_app(PROVIDER)),
    )
    with running(binding_for(gateway)) as server:
        async with open_socket(server) as socket:
            return await socket.run(body)


async def test_restart_between_approval_and_resume_executes_once(tmp_path: Path) -> None:
    path, thread = new_id("restart"), new_id("t")
    first = await run_once(
        tmp_path, run_input(thread, [user(f'call delete_file with {{"path":"{path}"}}')])
    )
    finished = first[-1]
    assert finished["outcome"]["type"] == "interrupt"
    resume = resume_all(finished, {"approved": True})
    second = await run_once(tmp_path, run_input(thread, resume=resume))
    assert second[-1]["type"] == "RUN_FINISHED", second[-1]
    assert [r["content"] for r in of_type(second, "TOOL_CALL_RESULT")] == [f"deleted {path}"]
    third = await run_once(tmp_path, run_input(thread, resume=resume))
    assert third[-1]["type"] == "RUN_FINISHED" and of_type(third, "TOOL_CALL_RESULT") == []
    assert EXECUTIONS["delete_file", path] == 1

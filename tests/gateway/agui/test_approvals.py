"""Approval flows over WebSocket, counted: each tool runs exactly once or never.

Both styles: AG-UI interrupts (``resume[]``) and ``confirm_changes`` (a tool message
answering the synthetic call), including the snapshots a confirmation leaves behind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway.agui.harness import (
    Server,
    Socket,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    open_socket,
    resume_all,
    run_input,
    serve,
    snapshot,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    gateway = make_gateway(str(tmp_path_factory.mktemp("agui-approvals")))
    yield from serve(binding_for(gateway))


def delete(path: str) -> dict[str, Any]:
    return user(f'call delete_file with {{"path":"{path}"}}')


async def interrupted(socket: Socket, thread: str, text_message: dict[str, Any]) -> dict[str, Any]:
    """Run until the approval interrupt; return the ``RUN_FINISHED``."""
    events = await socket.run(run_input(thread, [text_message]))
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED", finished
    assert finished["outcome"]["type"] == "interrupt"
    return finished


async def test_approve_runs_the_tool_once(server: Server) -> None:
    path, thread = new_id("approve"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(path))
        interrupt = finished["outcome"]["interrupts"][0]
        assert interrupt["reason"] == "tool_call"
        assert set(interrupt["responseSchema"]["properties"]) >= {"approved", "editedArgs"}
        assert EXECUTIONS["delete_file", path] == 0
        events = await socket.run(
            run_input(thread, resume=resume_all(finished, {"approved": True}))
        )
    assert events[-1]["outcome"] == {"type": "success"}
    results = of_type(events, "TOOL_CALL_RESULT")
    assert [result["toolCallId"] for result in results] == [interrupt["toolCallId"]]
    assert results[0]["content"] == f"deleted {path}"
    assert EXECUTIONS["delete_file", path] == 1


async def test_reject_never_runs_the_tool(server: Server) -> None:
    path, thread = new_id("reject"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(path))
        payload = {"approved": False, "reason": "not today"}
        events = await socket.run(run_input(thread, resume=resume_all(finished, payload)))
    assert events[-1]["type"] == "RUN_FINISHED"
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert "rejected" in result["content"] and "not today" in result["content"]
    assert EXECUTIONS["delete_file", path] == 0


async def test_approve_with_edits_runs_the_edited_call(server: Server) -> None:
    path, edited, thread = new_id("orig"), new_id("edited"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(path))
        payload = {"approved": True, "editedArgs": {"path": edited}}
        events = await socket.run(run_input(thread, resume=resume_all(finished, payload)))
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == f"deleted {edited}"
    assert (EXECUTIONS["delete_file", path], EXECUTIONS["delete_file", edited]) == (0, 1)


async def test_partial_decision_on_a_batch_runs_nothing(server: Server) -> None:
    path, thread = new_id("batch"), new_id("t")
    mail_before = EXECUTIONS["send_email", "default"]
    text = f'call send_email and call delete_file with {{"path":"{path}"}}'
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, user(text))
        interrupts = finished["outcome"]["interrupts"]
        assert len(interrupts) == 2
        partial = [
            {
                "interruptId": interrupts[0]["id"],
                "status": "resolved",
                "payload": {"approved": True},
            }
        ]
        refused = await socket.run(run_input(thread, resume=partial))
        assert refused[-1]["type"] == "RUN_ERROR"
        assert refused[-1]["code"] == "INTERRUPT_NOT_ADDRESSED"
        assert EXECUTIONS["send_email", "default"] == mail_before
        assert EXECUTIONS["delete_file", path] == 0
        full = [
            {
                "interruptId": interrupts[0]["id"],
                "status": "resolved",
                "payload": {"approved": True},
            },
            {
                "interruptId": interrupts[1]["id"],
                "status": "resolved",
                "payload": {"approved": False},
            },
        ]
        events = await socket.run(run_input(thread, resume=full))
    assert events[-1]["type"] == "RUN_FINISHED"
    assert len(of_type(events, "TOOL_CALL_RESULT")) == 2
    assert EXECUTIONS["send_email", "default"] == mail_before + 1
    assert EXECUTIONS["delete_file", path] == 0


async def test_chained_approvals_across_two_runs(server: Server) -> None:
    first, second, thread = new_id("first"), new_id("second"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(first))
        await socket.run(run_input(thread, resume=resume_all(finished, {"approved": True})))
        finished = await interrupted(socket, thread, delete(second))
        events = await socket.run(
            run_input(thread, resume=resume_all(finished, {"approved": True}))
        )
    assert events[-1]["type"] == "RUN_FINISHED"
    assert (EXECUTIONS["delete_file", first], EXECUTIONS["delete_file", second]) == (1, 1)


async def test_the_same_resume_twice_executes_once(server: Server) -> None:
    path, thread = new_id("twice"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(path))
        resume = resume_all(finished, {"approved": True})
        await socket.run(run_input(thread, resume=resume))
        again = await socket.run(run_input(thread, resume=resume))
        assert again[-1]["type"] == "RUN_FINISHED"
        assert of_type(again, "TOOL_CALL_RESULT") == []
        changed = await socket.run(
            run_input(thread, resume=resume_all(finished, {"approved": False}))
        )
    assert changed[-1]["code"] == "INTERRUPT_ALREADY_RESOLVED"
    assert EXECUTIONS["delete_file", path] == 1


async def test_two_sockets_resuming_at_once_execute_once(server: Server) -> None:
    path, thread = new_id("race"), new_id("t")
    async with open_socket(server) as first, open_socket(server) as second:
        finished = await interrupted(first, thread, delete(path))
        resume = resume_all(finished, {"approved": True})
        outcomes = await asyncio.gather(
            first.run(run_input(thread, resume=resume)),
            second.run(run_input(thread, resume=resume)),
        )
    assert [events[-1]["type"] for events in outcomes] == ["RUN_FINISHED", "RUN_FINISHED"]
    assert sum(len(of_type(events, "TOOL_CALL_RESULT")) for events in outcomes) == 1
    assert EXECUTIONS["delete_file", path] == 1


async def test_a_forged_interrupt_id_is_refused(server: Server) -> None:
    path, thread = new_id("forged"), new_id("t")
    async with open_socket(server) as socket:
        finished = await interrupted(socket, thread, delete(path))
        forged = [
            {
                "interruptId": "approval:approval_forged",
                "status": "resolved",
                "payload": {"approved": True},
            }
        ]
        refused = await socket.run(run_input(thread, resume=forged))
        assert refused[-1] == {**refused[-1], "type": "RUN_ERROR", "code": "UNKNOWN_INTERRUPT"}
        assert EXECUTIONS["delete_file", path] == 0
        foreign = [{"interruptId": "not-ours", "status": "resolved", "payload": {}}]
        assert (await socket.run(run_input(thread, resume=foreign)))[-1]["code"] == "INVALID_INPUT"
        events = await socket.run(
            run_input(thread, resume=resume_all(finished, {"approved": True}))
        )
    assert events[-1]["type"] == "RUN_FINISHED"
    assert EXECUTIONS["delete_file", path] == 1


async def test_pending_interrupt_refuses_input_without_resume(server: Server) -> None:
    path, thread = new_id("pending"), new_id("t")
    async with open_socket(server) as socket:
        await interrupted(socket, thread, delete(path))
        events = await socket.run(run_input(thread, [user("never mind, hello")]))
    assert events[-1]["code"] == "INTERRUPT_NOT_ADDRESSED"
    assert of_type(events, "RUN_STARTED") and EXECUTIONS["delete_file", path] == 0


# ---------------------------------------------------------------- confirm_changes


async def confirmation(socket: Socket, thread: str, path: str) -> tuple[str, str]:
    """Run until the confirm_changes call; its call id and the original call id."""
    events = await socket.run(run_input(thread, [delete(path)]))
    finished = events[-1]
    assert finished["outcome"]["type"] == "success"
    (pending,) = finished["outcome"]["pendingToolCallIds"]
    confirm = [e for e in of_type(events, "TOOL_CALL_START") if e["toolCallId"] == pending]
    assert confirm and confirm[0]["toolCallName"] == "confirm_changes"
    arguments = json.loads(
        "".join(e["delta"] for e in of_type(events, "TOOL_CALL_ARGS") if e["toolCallId"] == pending)
    )
    assert arguments["function_name"] == "delete_file"
    assert arguments["function_arguments"] == {"path": path}
    return pending, arguments["function_call_id"]


def answer(confirm_id: str, content: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": new_id("tm"),
        "role": "tool",
        "toolCallId": confirm_id,
        "content": json.dumps(content),
    }


async def test_confirm_changes_accepted_snapshot_shows_the_real_result(server: Server) -> None:
    path, thread = new_id("confirm"), new_id("t")
    async with open_socket(server, "confirmer") as socket:
        confirm_id, call_id = await confirmation(socket, thread, path)
        events = await socket.run(run_input(thread, [answer(confirm_id, {"accepted": True})]))
    assert events[-1]["type"] == "RUN_FINISHED"
    assert EXECUTIONS["delete_file", path] == 1
    messages = snapshot(events)
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert [(m["toolCallId"], m["content"]) for m in tool_messages] == [
        (call_id, f"deleted {path}")
    ]
    call_ids = [c["id"] for m in messages for c in m.get("toolCalls", [])]
    assert confirm_id not in call_ids and call_id in call_ids


async def test_confirm_changes_rejected_snapshot_is_cleaned(server: Server) -> None:
    path, thread = new_id("decline"), new_id("t")
    async with open_socket(server, "confirmer") as socket:
        confirm_id, call_id = await confirmation(socket, thread, path)
        events = await socket.run(run_input(thread, [answer(confirm_id, {"accepted": False})]))
    assert EXECUTIONS["delete_file", path] == 0
    messages = snapshot(events)
    answers = [m for m in messages if m.get("toolCallId") == confirm_id]
    assert [m["content"] for m in answers] == ["Changes declined."]
    denied = [m for m in messages if m.get("toolCallId") == call_id]
    assert len(denied) == 1 and "rejected" in denied[0]["content"]


async def test_a_tampered_confirm_changes_answer_is_refused(server: Server) -> None:
    path, thread = new_id("tamper"), new_id("t")
    async with open_socket(server, "confirmer") as socket:
        confirm_id, call_id = await confirmation(socket, thread, path)
        for tampered in (
            {"accepted": True, "function_call_id": "call_other"},
            {"accepted": True, "function_name": "send_email"},
            {"accepted": True, "function_call_id": call_id, "function_arguments": {"path": "/"}},
        ):
            refused = await socket.run(run_input(thread, [answer(confirm_id, tampered)]))
            assert refused[-1]["code"] == "APPROVAL_TAMPERED", tampered
        assert EXECUTIONS["delete_file", path] == 0
        echo = {
            "accepted": True,
            "function_call_id": call_id,
            "function_name": "delete_file",
            "function_arguments": {"path": path},
        }
        events = await socket.run(run_input(thread, [answer(confirm_id, echo)]))
        assert events[-1]["type"] == "RUN_FINISHED"
        repeat = await socket.run(run_input(thread, [answer(confirm_id, {"accepted": True})]))
    assert repeat[-1]["type"] == "RUN_FINISHED" and of_type(repeat, "TOOL_CALL_RESULT") == []
    assert EXECUTIONS["delete_file", path] == 1

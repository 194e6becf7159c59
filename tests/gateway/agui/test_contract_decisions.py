"""AG-UI rows of the loop contract about decisions, from the client's side (real HTTP and
WebSocket; the upstream is a Responses emulator the test keeps, to read what the model saw).

- A rejected call gets one ``TOOL_CALL_RESULT`` labelled ``denied`` (never a success), the
  tool runs zero times and the model sees the rejection; in a mixed batch only the approved
  call runs, each call gets exactly one result, and a repeated resume emits none.
- A client that keeps no history of its own (it sends only its decision, with per-run
  context and state) still resumes the approval: the server's thread is the history the
  model sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import httpx
import pytest

from interlock.emulators.openai_responses import OpenAIResponsesEmulator, create_app
from interlock.transcript import JsonObject
from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    run_input,
    run_over,
    serve,
    snapshot,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS

DENIED = "The user rejected this call; it was not executed."


@pytest.fixture(scope="module")
def emulator() -> OpenAIResponsesEmulator:
    return OpenAIResponsesEmulator()


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, emulator: OpenAIResponsesEmulator
) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("agui-decisions")
    upstream = httpx.ASGITransport(app=create_app(emulator))
    gateway = make_gateway(str(directory), store=f"sqlite:///{directory}/s.db", upstream=upstream)
    yield from serve(binding_for(gateway))


async def send(server: Server, body: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    return await run_over(server, body, transport)


def call_names(events: list[dict[str, Any]]) -> dict[str, str]:
    """Tool name → call id, from the run's ``TOOL_CALL_START`` events."""
    return {
        event["toolCallName"]: event["toolCallId"] for event in of_type(events, "TOOL_CALL_START")
    }


def decisions(events: list[dict[str, Any]], approve: dict[str, bool]) -> list[dict[str, Any]]:
    """``resume[]`` approving or rejecting each interrupt of the run by its tool's name."""
    names = {call_id: name for name, call_id in call_names(events).items()}
    return [
        {
            "interruptId": interrupt["id"],
            "status": "resolved",
            "payload": {"approved": approve[names[interrupt["toolCallId"]]]},
        }
        for interrupt in events[-1]["outcome"]["interrupts"]
    ]


def outcome_label(event: dict[str, Any]) -> str | None:
    metadata = cast(dict[str, Any], event.get("metadata") or {})
    return cast(dict[str, Any], metadata.get("interlock") or {}).get("outcome")


def outputs_seen_by_model(body: JsonObject) -> dict[str, str]:
    items = cast(list[JsonObject], body["input"])
    return {
        str(item["call_id"]): str(item["output"])
        for item in items
        if item.get("type") == "function_call_output"
    }


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_a_rejected_call_is_reported_as_denied_and_never_as_executed(
    server: Server, emulator: OpenAIResponsesEmulator, transport: str
) -> None:
    thread, path, to = new_id("t"), new_id("keep"), new_id("bob")
    both = f'call delete_file with {{"path":"{path}"}} and call send_email with {{"to":"{to}"}}'
    paused = await send(server, run_input(thread, [user(both)]), transport)
    ids = call_names(paused)
    interrupted = [i["toolCallId"] for i in paused[-1]["outcome"]["interrupts"]]
    assert sorted(ids) == ["delete_file", "send_email"] and sorted(interrupted) == sorted(
        ids.values()
    )
    resume = run_input(thread, resume=decisions(paused, {"delete_file": False, "send_email": True}))
    events = await send(server, resume, transport)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    results = {event["toolCallId"]: event for event in of_type(events, "TOOL_CALL_RESULT")}
    assert len(of_type(events, "TOOL_CALL_RESULT")) == 2 == len(results), "one result per call"
    rejected, approved = results[ids["delete_file"]], results[ids["send_email"]]
    assert outcome_label(rejected) == "denied" and rejected["content"] == DENIED
    assert outcome_label(approved) is None and approved["content"] == f"sent to {to}"
    assert (EXECUTIONS["delete_file", path], EXECUTIONS["send_email", to]) == (0, 1)
    seen = outputs_seen_by_model(emulator.received[-1])
    assert seen[ids["delete_file"]] == DENIED, "the model sees the rejection"
    held = [m for m in snapshot(events) if m.get("toolCallId") == ids["delete_file"]]
    assert len(held) == 1 and held[0]["content"] == DENIED
    assert held[0]["metadata"]["interlock"]["outcome"] == "denied"
    again = await send(server, resume, transport)
    assert of_type(again, "TOOL_CALL_RESULT") == [], "a repeated resume emits nothing"
    assert (EXECUTIONS["delete_file", path], EXECUTIONS["send_email", to]) == (0, 1)


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_a_client_without_history_resumes_from_the_servers_thread(
    server: Server, emulator: OpenAIResponsesEmulator, transport: str
) -> None:
    thread, path = new_id("t"), new_id("nohistory")
    ask = user(f'call delete_file with {{"path":"{path}"}}')
    paused = await send(server, run_input(thread, [ask]), transport)
    (interrupt,) = paused[-1]["outcome"]["interrupts"]
    resume = run_input(
        thread,
        resume=decisions(paused, {"delete_file": True}),
        context=[{"description": "locale", "value": "nb-NO"}],
        state={"page": "files"},
    )
    assert resume["messages"] == []
    events = await send(server, resume, transport)
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == interrupt["toolCallId"]
    assert result["content"] == f"deleted {path}" and EXECUTIONS["delete_file", path] == 1
    body = emulator.received[-1]
    items = cast(list[JsonObject], body["input"])
    texts = [str(item.get("content")) for item in items if item.get("role") == "user"]
    assert any(path in text for text in texts), "the stored user message reaches the model"
    calls = [item["call_id"] for item in items if item.get("type") == "function_call"]
    assert calls == [interrupt["toolCallId"]] and list(outputs_seen_by_model(body)) == calls
    instructions = json.dumps(items[0])
    assert items[0].get("role") in ("system", "developer") and "Be helpful." in instructions
    assert "nb-NO" in instructions and "files" in instructions, (
        "the run's context and state are shared alongside the stored history"
    )

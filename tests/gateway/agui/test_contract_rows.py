"""AG-UI rows of the loop contract, from the client's side (real HTTP and WebSocket).

- An approved tool that raises ends in exactly one terminal error result for the approved
  call (one ``TOOL_CALL_RESULT``), having run once.
- A tool that needs no approval gets exactly one ``TOOL_CALL_RESULT`` and no interrupt or
  approval event of any kind.
- An approved tool that asks for input pauses with an ``input_required`` interrupt and no
  ``TOOL_CALL_RESULT``; the thread keeps the call open until the answer, then one result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    resume_all,
    run_input,
    run_over,
    serve,
    snapshot,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("agui-contract")
    yield from serve(binding_for(make_gateway(str(directory), store=f"sqlite:///{directory}/s.db")))


async def send(server: Server, body: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    return await run_over(server, body, transport)


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_approved_tool_that_raises_gives_one_error_result(
    server: Server, transport: str
) -> None:
    thread, path = new_id("t"), new_id("shred")
    ask = run_input(thread, [user(f'call shred_file with {{"path":"{path}"}}')])
    paused = await send(server, ask, transport)
    assert paused[-1]["outcome"]["type"] == "interrupt"
    call_id = paused[-1]["outcome"]["interrupts"][0]["toolCallId"]
    resume = run_input(thread, resume=resume_all(paused[-1], {"approved": True}))
    events = await send(server, resume, transport)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == call_id
    assert result["content"] == "Error: tool 'shred_file' failed."
    assert EXECUTIONS["shred_file", path] == 1
    again = await send(server, resume, transport)  # the same resume again: nothing runs
    assert of_type(again, "TOOL_CALL_RESULT") == [] and EXECUTIONS["shred_file", path] == 1


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_ordinary_tool_result_gets_no_extra_event(server: Server, transport: str) -> None:
    thread, city = new_id("t"), new_id("city")
    events = await send(
        server, run_input(thread, [user(f'call get_weather with {{"city":"{city}"}}')]), transport
    )
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    (start,) = of_type(events, "TOOL_CALL_START")
    assert start["toolCallName"] == "get_weather" and result["toolCallId"] == start["toolCallId"]
    assert result["content"] == f"sunny in {city}"
    names = {event["type"] for event in events}
    assert not any("INTERRUPT" in name or "CUSTOM" in name for name in names), names
    assert EXECUTIONS["get_weather", city] == 1


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_an_approved_tool_asking_for_input_pauses_without_a_result(
    server: Server, transport: str
) -> None:
    thread, hotel = new_id("t"), new_id("hotel")
    paused = await send(
        server, run_input(thread, [user(f'call book_room with {{"hotel":"{hotel}"}}')]), transport
    )
    call_id = paused[-1]["outcome"]["interrupts"][0]["toolCallId"]
    approved = run_input(thread, resume=resume_all(paused[-1], {"approved": True}))
    asked = await send(server, approved, transport)
    (interrupt,) = asked[-1]["outcome"]["interrupts"]
    assert interrupt["reason"] == "input_required" and interrupt["toolCallId"] == call_id
    assert interrupt["message"] == "Which day?"
    assert of_type(asked, "TOOL_CALL_RESULT") == []
    held = snapshot(asked)
    assert [c["id"] for m in held for c in m.get("toolCalls", [])] == [call_id]
    assert not [m for m in held if m["role"] == "tool"], "the call stays open, no result"
    assert EXECUTIONS["book_room", hotel] == 0
    answered = run_input(thread, resume=resume_all(asked[-1], "monday"))
    events = await send(server, answered, transport)
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == call_id and result["content"] == f"booked {hotel} on monday"
    assert EXECUTIONS["book_room", hotel] == 1

"""A tool whose result no store can hold: the step is recorded, never run again.

A tool returns half of an emoji (a lone UTF-16 surrogate). The loop records that step as
a ``failed`` result naming the problem, so the thread saves and the run finishes; the
same input sent again (three times) is a replay that runs nothing, and the thread goes
on. Over SSE (real HTTP POST) and WebSocket, against ``interlock serve`` processes on a
SQLite file and on a redis-server, with a tool that counts its executions in a file.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.agui.counted import executions
from tests.gateway.agui.harness import (
    new_id,
    of_type,
    run_input,
    run_over,
    snapshot,
    user,
)
from tests.gateway.agui.processes import Process, Shared

EXPECTED = (
    "Error: tool 'cut_emoji' returned a result that cannot be sent or stored: "
    "output[0]: text that is not valid Unicode (a lone UTF-16 surrogate)."
)


async def send(process: Process, body: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    return await run_over(process, body, transport)  # a Process has the same url, ws_url


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_a_lone_surrogate_in_a_tool_result_is_recorded_and_never_run_again(
    shared: Shared, transport: str
) -> None:
    thread, tag, counts = new_id("t"), new_id("cut"), shared.cluster.counts
    first, second = shared.processes[0], shared.processes[1]
    body = run_input(thread, [user(f'call cut_emoji with {{"tag":"{tag}"}}')])
    events = await send(first, body, transport)
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["content"] == EXPECTED
    for process in (first, second, first):  # the same input again, on either gateway
        again = await send(process, body, transport)
        assert again[-1]["type"] == "RUN_FINISHED", again[-1]
        assert of_type(again, "TOOL_CALL_START") == []
    later = await send(second, run_input(thread, [user("and now?")]), transport)
    assert later[-1]["type"] == "RUN_FINISHED", later[-1]
    assert executions(counts, "cut_emoji", tag, "started") == 1
    assert executions(counts, "cut_emoji", tag, "finished") == 1
    results = [m["content"] for m in snapshot(later) if m["role"] == "tool"]
    assert results == [EXPECTED]

"""Service-side continuation (``Agent(service_state=True)``): what the service already holds
is never sent again, and what it does not hold yet is sent exactly once.

Contract matrix rows: service-side approval decision, stored function call/result. Both
renderings must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from interlock.core_loop import Tool, tool
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    TextPart,
    ToolResultPart,
)
from tests.core_loop.harness import Calls, Mode, World, both, call, decide, reply, say, shape, user

HOSTED = ApprovalRequestPart(
    approval_id="mcpr_1",
    call=call("mcpr_1", "search_docs", '{"q":"x"}', owner="hosted", server_label="docs"),
)


def local_search(calls: Calls) -> Tool:
    """A local tool with the hosted tool's name: it must never run for the hosted call."""

    @tool
    def search_docs(q: str) -> str:
        calls("search_docs", q=q)
        return "local"

    return search_docs


@pytest.mark.parametrize("approved", [True, False])
async def test_a_hosted_decision_is_sent_once_without_its_stored_request(approved: bool) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(HOSTED, response_id="resp_1"),
                say("Here are the docs.", response_id="resp_2"),
                say("You're welcome.", response_id="resp_3"),
            ],
            [local_search(calls)],
            {"service_state": True},
            mode=mode,
        )
        first = await world.run([user("docs?")])
        assert first.outcome == "awaiting_approval" and first.response_id == "resp_1"
        history = [user("docs?"), *first.messages, decide(("mcpr_1", approved))]
        second = await world.run(history, previous_response_id="resp_1")
        assert second.outcome == "final" and second.response_id == "resp_2"
        resumed = world.requests[1]
        assert resumed.continuation.previous_response_id == "resp_1"
        assert [message.parts for message in resumed.messages] == [
            (ApprovalResponsePart(approval_id="mcpr_1", approved=approved),)
        ], "the stored request is not re-sent; the current decision is sent, once"
        later = [*history, *second.messages, user("thanks")]
        third = await world.run(later, previous_response_id="resp_2")
        assert shape(world.requests[2].messages) == [("user", ["text"])], (
            "a decision already sent is inert on a later turn"
        )
        return first, second, third, calls.count()

    *_, executed = await both(scenario)
    assert executed == 0, "a hosted call is never executed locally"


async def test_stored_calls_are_dropped_and_new_outputs_kept() -> None:
    """The service issued the calls and stores them; the caller's full history carries them
    back, with one result Interlock ran and one the client sends: only the two outputs go."""
    client_tool = Tool.client("pick_color", parameters={"type": "object", "properties": {}})

    async def scenario(mode: Mode) -> Any:
        calls = Calls()

        @tool
        def lookup(city: str) -> str:
            calls("lookup", city=city)
            return f"sunny in {city}"

        world = World(
            [
                reply(
                    call("c1", "lookup", '{"city":"X"}'),
                    call("c2", "pick_color", "{}"),
                    response_id="resp_1",
                ),
                say("blue it is", response_id="resp_2"),
            ],
            [lookup, client_tool],
            {"service_state": True},
            mode=mode,
        )
        first = await world.run([user("go")])
        assert first.outcome == "awaiting_client" and first.response_id == "resp_1"
        client_result = Message(
            role="tool", parts=(ToolResultPart(call_id="c2", output=(TextPart(text="blue"),)),)
        )
        full_history = [user("go"), *first.messages, client_result]
        second = await world.run(full_history, previous_response_id="resp_1")
        assert second.outcome == "final" and second.text == "blue it is"
        sent = world.requests[1]
        assert sent.continuation.previous_response_id == "resp_1"
        assert shape(sent.messages) == [("tool", ["tool_result", "tool_result"])], (
            "no server-issued call is sent back"
        )
        outputs = [(result.call_id, result.text) for result in sent.messages[0].tool_results]
        assert outputs == [("c1", "sunny in X"), ("c2", "blue")]
        return first, second, calls.count("lookup")

    *_, executed = await both(scenario)
    assert executed == 1

"""A tool that hands back what no store, model or frontend can carry fails cleanly.

A lone UTF-16 surrogate or a non-JSON number in a tool's result (or in the state it sets)
would make the thread's save or the next model request fail after the tool ran. The loop
records such a step as an ordinary ``failed`` result naming the part, journaled like any
other, and the run goes on; the tool runs once. Streaming and non-streaming agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from interlock.core_loop import AgentState, tool
from interlock.core_loop._sendable import NOT_JSON, NOT_UNICODE, output_problem
from interlock.transcript import JsonPart, TextPart, ToolResultPart
from tests.core_loop.harness import Calls, Mode, World, both, call, reply, results, say, user

CASES = [
    ("lone-surrogate-text", "half an emoji \ud83d", "output[0]: " + NOT_UNICODE),
    ("lone-surrogate-json", {"note": "\udc00"}, "output[0]: " + NOT_UNICODE),
    ("nan-json", {"score": float("nan")}, "output[0]: " + NOT_JSON),
    ("second-part", [TextPart(text="fine"), TextPart(text="\ud83d")], "output[1]: " + NOT_UNICODE),
]


@pytest.mark.parametrize(
    ("value", "problem"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
async def test_an_unsendable_result_becomes_a_failed_result(value: object, problem: str) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()

        @tool
        def cut() -> object:
            """Returns something broken."""
            calls("cut")
            return value

        world = World([reply(call("c1", "cut")), say("noted")], [cut], mode=mode)
        result = await world.run([user("go")])
        (failed,) = results(result.messages)
        assert failed.outcome == "failed"
        assert failed.text == (
            f"Error: tool 'cut' returned a result that cannot be sent or stored: {problem}."
        )
        assert output_problem(failed) is None
        entry = await world.ledger.execution("thread", failed.occurrence_id or "")
        assert entry is not None and entry.result == failed, "the journal holds the failure"
        assert [part.kind for part in world.requests[1].messages[-1].parts] == ["tool_result"]
        assert result.messages[-1].parts == (TextPart(text="noted"),)
        return result, calls.count()

    _, count = await both(scenario)
    assert count == 1


def test_unsendable_state_is_refused_and_changes_nothing() -> None:
    """A tool's ``ctx.state.update``/``set`` raises, so the tool fails (a ``failed`` result)."""
    state = AgentState({"theme": "light"})
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        state.update({"theme": "\ud83d"})
    with pytest.raises(ValueError, match="NaN or infinity"):
        state.set({"theme": float("inf")})
    assert state.value == {"theme": "light"} and state.version == 0


def test_a_sendable_result_has_no_problem() -> None:
    result = ToolResultPart(
        call_id="c", output=(TextPart(text="été 🌞"), JsonPart(value={"a": [1.5, "ü"]}))
    )
    assert output_problem(result) is None

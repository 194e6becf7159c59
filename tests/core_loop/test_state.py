"""AgentState: a run's shared JSON document, copied in and out, versioned on change."""

from __future__ import annotations

import pytest

from interlock.core_loop import AgentState, Tool, ToolContext, ToolSet
from interlock.transcript import ToolCallPart


def test_values_are_copied_in_and_out() -> None:
    source = {"items": [1]}
    state = AgentState(source, forwarded_props={"k": "v"})
    source["items"].append(2)
    seen = state.value
    assert seen == {"items": [1]}
    assert isinstance(seen, dict)
    seen["items"] = []
    assert state.value == {"items": [1]} and state.version == 0
    assert state.forwarded_props == {"k": "v"}


def test_set_and_update_count_versions() -> None:
    state = AgentState(None)
    state.update({"a": 1})
    state.update({"b": 2})
    assert state.value == {"a": 1, "b": 2} and state.version == 2
    state.set([1, 2])
    assert state.value == [1, 2] and state.version == 3
    with pytest.raises(TypeError):
        state.update({"c": 3})
    with pytest.raises(TypeError):
        state.set({"bad": object()})  # type: ignore[dict-item] -- not JSON on purpose
    assert state.version == 3


def test_tools_reach_the_state_through_their_context() -> None:
    state = AgentState({"n": 1})
    toolset = ToolSet((Tool.from_function(len),), state)
    context = ToolContext(
        thread_id="t", call=ToolCallPart(call_id="c", name="len"), toolset=toolset
    )
    assert context.state is state
    assert ToolContext(thread_id="t", call=ToolCallPart(call_id="c", name="len")).state is None

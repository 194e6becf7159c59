"""The fold from loop events to a result."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.core_loop import ModelUpdate, RunFinished, ToolFinished, fold_events
from interlock.core_loop._events import model_update
from interlock.transcript import PartDelta, PartStarted, ResponseStarted, TextPart, ToolResultPart
from tests.core_loop.harness import call


def test_fold_orders_messages_by_first_event_and_drops_empty_ones() -> None:
    result = ToolResultPart(call_id="c", occurrence_id="o")
    events = [
        ModelUpdate(iteration=1, message_id="m1", update=ResponseStarted()),
        ModelUpdate(
            iteration=1, message_id="m2", update=PartStarted(index=0, part=TextPart(text="hi"))
        ),
        ToolFinished(message_id="t1", call=call("c", "f"), result=result),
        RunFinished(outcome="final"),
    ]
    folded = fold_events(events)
    assert [(m.id, m.role) for m in folded.messages] == [("m2", "assistant"), ("t1", "tool")]
    assert folded.text == "hi" and folded.outcome == "final"


def test_fold_requires_run_finished() -> None:
    with pytest.raises(ValueError, match="without RunFinished"):
        fold_events([])


@given(st.integers(0, 9), st.text(max_size=4), st.integers(0, 3), st.text(max_size=4))
def test_the_loops_model_update_is_the_one_its_class_builds(
    iteration: int, message_id: str, index: int, delta: str
) -> None:
    update = PartDelta(index=index, delta=delta)
    built = model_update(iteration, message_id, update)  # what the loop yields per update
    constructed = ModelUpdate(iteration=iteration, message_id=message_id, update=update)
    assert built == constructed and repr(built) == repr(constructed)
    assert type(built) is ModelUpdate and hash(built) == hash(constructed)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.iteration = 1  # pyright: ignore[reportAttributeAccessIssue] -- frozen, checked

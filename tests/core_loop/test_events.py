"""The fold from loop events to a result."""

from __future__ import annotations

import pytest

from interlock.core_loop import ModelUpdate, RunFinished, ToolFinished, fold_events
from interlock.transcript import PartStarted, ResponseStarted, TextPart, ToolResultPart
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

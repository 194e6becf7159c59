"""The step union: every way a run can stop maps to exactly one reported outcome."""

from __future__ import annotations

from typing import get_args

from interlock.core_loop import Outcome
from interlock.core_loop._step import (
    AwaitingApproval,
    AwaitingClient,
    AwaitingInput,
    FinalAnswer,
    LimitReached,
    Stop,
    Terminated,
    stop_outcome,
)


def test_every_outcome_has_exactly_one_stop() -> None:
    stops: list[Stop] = [
        FinalAnswer(),
        AwaitingApproval(approvals=()),
        AwaitingInput(inputs=()),
        AwaitingClient(calls=()),
        Terminated(reason="middleware"),
        LimitReached(reason="max_iterations"),
    ]
    outcomes = [stop_outcome(stop) for stop in stops]
    assert sorted(outcomes) == sorted(get_args(Outcome))
    assert {type(stop) for stop in stops} == set(get_args(Stop))

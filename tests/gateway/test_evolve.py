"""``evolve`` returns what ``dataclasses.replace`` returns (or raises what it raises), for the
canonical request and for dataclasses ``replace`` treats specially."""

from __future__ import annotations

import dataclasses
from dataclasses import InitVar, dataclass, field, replace
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.evolve import evolve
from interlock.transcript import (
    Continuation,
    GenerationOptions,
    Message,
    Request,
    TextPart,
    ToolSpec,
)

REQUESTS = st.builds(
    Request,
    model=st.text(max_size=5),
    messages=st.lists(
        st.builds(
            Message,
            role=st.just("user"),
            parts=st.tuples(st.builds(TextPart, text=st.text(max_size=5))),
        ),
        max_size=2,
    ).map(tuple),
    tools=st.lists(
        st.builds(ToolSpec, name=st.text(min_size=1, max_size=5), parameters=st.just({})),
        max_size=1,
    ).map(tuple),
    stream=st.booleans(),
    options=st.builds(GenerationOptions, temperature=st.none() | st.floats(0, 2)),
    continuation=st.builds(Continuation, store=st.none() | st.booleans()),
)
CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "model": st.text(max_size=5),
        "stream": st.booleans(),
        "messages": st.just(()),
        "continuation": st.builds(Continuation, store=st.just(False)),
    },
)


@settings(max_examples=200, deadline=None)
@given(REQUESTS, CHANGES)
def test_a_request_evolves_as_replace_makes_it(
    request: Request, changes: dict[str, object]
) -> None:
    evolved = evolve(request, **changes)
    assert evolved == replace(request, **changes)
    assert type(evolved) is Request
    for name in (each.name for each in dataclasses.fields(Request)):
        if name not in changes:  # passed through, not copied
            assert getattr(evolved, name) is getattr(request, name)


def test_an_unknown_field_is_refused_as_replace_refuses_it() -> None:
    request = Request(model="m", messages=())
    with pytest.raises(TypeError):
        replace(request, colour="red")  # pyright: ignore[reportCallIssue]
    with pytest.raises(TypeError):
        evolve(request, colour="red")


@dataclass(frozen=True)
class Counted:
    total: int
    label: str = ""
    doubled: int = field(init=False, default=0)
    unit: ClassVar[str] = "tokens"

    def __post_init__(self) -> None:
        object.__setattr__(self, "doubled", self.total * 2)


@dataclass
class Scaled:
    value: int
    factor: InitVar[int]

    def __post_init__(self, factor: int) -> None:
        self.value *= factor


def test_fields_init_does_not_take_are_left_to_replace() -> None:
    counted = Counted(3, "a")
    assert evolve(counted, total=5) == replace(counted, total=5) == Counted(5, "a")
    assert evolve(counted, total=5).doubled == 10
    with pytest.raises(ValueError, match="init=False"):
        evolve(counted, doubled=1)
    scaled = Scaled(2, 3)
    with pytest.raises(ValueError, match="InitVar"):
        evolve(scaled, value=1)
    assert evolve(scaled, value=1, factor=4) == replace(scaled, value=1, factor=4) == Scaled(1, 4)

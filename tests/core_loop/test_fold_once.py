"""The loop folds its own events (``run_loop(folder=…)``): a model call's updates once, by
the builder the loop answers from. Whatever the model streams, that fold is the general
fold of the events it yielded, and the non-streaming API gives the same."""

from __future__ import annotations

import asyncio
import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.core_loop import (
    Agent,
    EventFolder,
    InMemoryLedgerStore,
    Limits,
    LoopEvent,
    LoopResult,
    ScriptedModel,
    ScriptEntry,
    fold_events,
    run_agent,
    run_loop,
    sequential_ids,
    tool,
)
from interlock.transcript import (
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ResponseFinished,
    ResponseStarted,
    TextPart,
    ToolCallPart,
    Update,
    Usage,
    UsageUpdate,
)


@tool
def echo(word: str) -> str:
    """Say ``word`` back."""
    return word


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[start:end] for start, end in itertools.pairwise(points)]


@st.composite
def _turn(draw: st.DrawFn, number: int) -> list[Update]:
    """One model turn streamed part by part: texts and reasoning in chunks (maybe none),
    calls to ``echo``, to an unknown tool, or with arguments it refuses."""
    kinds = draw(
        st.lists(st.sampled_from(["text", "reasoning", "call", "unknown", "bad"]), max_size=4)
    )
    updates: list[Update] = [ResponseStarted(id=f"r{number}", model="m")]
    for index, kind in enumerate(kinds):
        text = draw(st.text(alphabet="ab \n", max_size=8))
        cuts = draw(st.lists(st.integers(0, 8), max_size=3))
        part: Part
        if kind == "text":
            part, opened = TextPart(text=text), TextPart(text="")
        elif kind == "reasoning":
            part = ReasoningPart(reasoning_kind="summary", text=text, item_id=f"rs{index}")
            opened = ReasoningPart(reasoning_kind="summary", text="", item_id=f"rs{index}")
        else:
            name = "echo" if kind != "unknown" else "missing"
            arguments = json.dumps({"word": text}) if kind != "bad" else "{"
            part = ToolCallPart(call_id=f"c{number}.{index}", name=name, arguments=arguments)
            opened = ToolCallPart(call_id=f"c{number}.{index}", name=name, arguments="")
        updates.append(PartStarted(index=index, part=opened))
        source = part.arguments if isinstance(part, ToolCallPart) else part.text
        updates += [PartDelta(index=index, delta=piece) for piece in _chunks(source, cuts)]
        if draw(st.booleans()):
            updates.append(PartFinished(index=index, part=part))
    if draw(st.booleans()):
        updates.append(UsageUpdate(usage=Usage(input_tokens=number, output_tokens=1)))
    updates.append(ResponseFinished(finish_reason="stop"))
    return updates


@st.composite
def _script(draw: st.DrawFn) -> list[ScriptEntry]:
    return [draw(_turn(number)) for number in range(draw(st.integers(1, 4)))]


def _world(script: list[ScriptEntry], iterations: int) -> tuple[Agent, ScriptedModel]:
    agent = Agent(model="m", tools=(echo,), limits=Limits(max_iterations=iterations))
    # more turns than the loop can ask for: the scripts end where the loop does
    return agent, ScriptedModel([*script, *[[ResponseFinished()]] * 6])


async def _both(script: list[ScriptEntry], iterations: int) -> tuple[LoopResult, ...]:
    agent, model = _world(script, iterations)
    folder = EventFolder()
    events: list[LoopEvent] = [
        event
        async for event in run_loop(
            agent,
            model,
            "go",
            ledger=InMemoryLedgerStore(),
            thread_id="t",
            ids=sequential_ids(),
            folder=folder,
        )
    ]
    agent, model = _world(script, iterations)
    result = await run_agent(
        agent, model, "go", ledger=InMemoryLedgerStore(), thread_id="t", ids=sequential_ids()
    )
    return folder.result(), fold_events(events), result


@settings(max_examples=150, deadline=None)
@given(_script(), st.integers(1, 3))
def test_the_loops_own_fold_is_the_fold_of_its_events(
    script: list[ScriptEntry], iterations: int
) -> None:
    own, general, non_streaming = asyncio.run(_both(script, iterations))
    assert own == general == non_streaming

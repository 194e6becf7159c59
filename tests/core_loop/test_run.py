"""The loop, scenario by scenario (contract matrix: normal invocation, errors and limits,
continuation). Every scenario runs streaming and non-streaming and both must agree."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlock.core_loop import (
    FALLBACK_TEXT,
    Limits,
    ModelStreamError,
    ModelUpdate,
    RunFinished,
    ScriptExhaustedError,
    TerminateLoop,
    Tool,
    ToolFinished,
    ToolInvocation,
    ToolStarted,
    tool,
)
from interlock.core_loop import Next as NextCall
from interlock.transcript import (
    ApprovalRequestPart,
    HostedToolPart,
    Message,
    PartDelta,
    PartFinished,
    PartStarted,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolChoice,
    ToolResultPart,
    Usage,
    UsageUpdate,
)
from tests.core_loop.harness import (
    Calls,
    Mode,
    World,
    both,
    call,
    reply,
    results,
    say,
    shape,
    think,
    user,
)


def lookup_tool(calls: Calls, name: str = "lookup") -> Tool:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        calls(name, city=city)
        return f"sunny in {city}"

    return Tool.from_function(lookup.function, name=name) if name != "lookup" else lookup  # type: ignore[arg-type]


def failing_tool(calls: Calls) -> Tool:
    @tool
    def explode() -> str:
        calls("explode")
        raise RuntimeError("kaboom")

    return explode


# Normal function invocation ---------------------------------------------------------


async def test_single_non_streaming_call() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "lookup", '{"city":"Paris"}')), say("It is sunny.")],
            [lookup_tool(calls)],
            mode=mode,
        )
        result = await world.run([user("weather?")])
        assert result.outcome == "final"
        assert shape(result.messages) == [
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["text"]),
        ]
        first_call = result.messages[0].parts[0]
        (first_result,) = results(result.messages)
        assert first_result.occurrence_id == first_call.occurrence_id is not None  # type: ignore[union-attr]
        assert first_result.call_id == "c1" and first_result.text == "sunny in Paris"
        assert [shape(request.messages) for request in world.requests] == [
            [("user", ["text"])],
            [("user", ["text"]), ("assistant", ["tool_call"]), ("tool", ["tool_result"])],
        ]
        return result, calls.count(), world.requests

    result, count, _ = await both(scenario)
    assert count == 1 and result.text == "It is sunny."


async def test_multiple_sequential_rounds() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"A"}')),
                reply(call("c1", "lookup", '{"city":"B"}')),
                say("done"),
            ],
            [lookup_tool(calls)],
            mode=mode,
        )
        result = await world.run([user("go")])
        pairs = [(r.call_id, r.text) for r in results(result.messages)]
        assert pairs == [("c1", "sunny in A"), ("c1", "sunny in B")]
        occurrences = {r.occurrence_id for r in results(result.messages)}
        assert len(occurrences) == 2, "a reused call id is a new occurrence"
        assert shape(world.requests[2].messages) == [
            ("user", ["text"]),
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
        ]
        return result, calls.count()

    _, count = await both(scenario)
    assert count == 2


async def test_streaming_call() -> None:
    streamed_call = [
        ResponseStarted(id="r1"),
        PartStarted(index=0, part=call("c1", "lookup", "")),
        PartDelta(index=0, delta='{"city":'),
        PartDelta(index=0, delta='"Oslo"}'),
        ResponseFinished(finish_reason="tool_calls"),
    ]

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World([streamed_call, say("cold")], [lookup_tool(calls)], mode=mode)
        result = await world.run([user("weather?")])
        assert results(result.messages)[0].text == "sunny in Oslo"
        if mode == "stream":
            kinds = [type(event).__name__ for event in world.runs[0]]
            assert kinds == [
                *["ModelUpdate"] * 5,
                "ToolStarted",
                "ToolFinished",
                *["ModelUpdate"] * 4,
                "RunFinished",
            ]
            started = world.runs[0][1]
            assert isinstance(started, ModelUpdate) and isinstance(started.update, PartStarted)
            occurrence = started.update.part.occurrence_id  # type: ignore[union-attr]
            finished = world.runs[0][6]
            assert isinstance(finished, ToolFinished)
            assert finished.result.occurrence_id == occurrence is not None
        return result, calls.count()

    await both(scenario)


async def test_reasoning_bound_call() -> None:
    async def scenario(mode: Mode) -> Any:
        world = World(
            [reply(think(), call("c1", "lookup", '{"city":"Rome"}')), say("warm")],
            [lookup_tool(Calls())],
            mode=mode,
        )
        result = await world.run([user("weather?")])
        assert shape(result.messages)[0] == ("assistant", ["reasoning", "tool_call"])
        assert shape(world.requests[1].messages)[1:] == [
            ("assistant", ["reasoning", "tool_call"]),
            ("tool", ["tool_result"]),
        ]
        return result

    await both(scenario)


async def test_parallel_calls() -> None:
    order: list[str] = []

    @tool
    async def slow(label: str) -> str:
        await asyncio.sleep(0.01 if label == "first" else 0)
        order.append(label)
        return label

    async def scenario(mode: Mode) -> Any:
        interleaved = [
            ResponseStarted(),
            PartStarted(index=0, part=call("a", "slow", "")),
            PartStarted(index=1, part=call("b", "slow", "")),
            PartDelta(index=0, delta='{"label":'),
            PartDelta(index=1, delta='{"label":"second"}'),
            PartDelta(index=0, delta='"first"}'),
            ResponseFinished(),
        ]
        world = World([interleaved, say("ok")], [slow], mode=mode)
        result = await world.run([user("go")])
        assert [(r.call_id, r.text) for r in results(result.messages)] == [
            ("a", "first"),
            ("b", "second"),
        ], "results in model order whatever order they finish in"
        return result

    await both(scenario)
    assert order == ["second", "first"] * 2


async def test_informational_only_call() -> None:
    hosted_call = call("h1", "web_search", "{}", owner="hosted", server_label="search")
    hosted_item = HostedToolPart(provider="openai", item_type="web_search_call", item={"id": "ws"})

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        guarded = Tool.from_function(
            lambda: calls("web_search"), name="web_search", approval="always"
        )
        world = World(
            [reply(hosted_call, hosted_item, TextPart(text="found"))], [guarded], mode=mode
        )
        result = await world.run([user("search")])
        assert result.outcome == "final" and result.pending_approvals == ()
        assert shape(result.messages) == [("assistant", ["tool_call", "hosted_tool", "text"])]
        assert calls.count() == 0 and len(world.requests) == 1
        return result

    await both(scenario)


async def test_declaration_only_call() -> None:
    client_tool = Tool.client("pick_color", parameters={"type": "object", "properties": {}})

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"X"}'), call("c2", "pick_color", '{"a":1}')),
                say("blue it is"),
            ],
            [lookup_tool(calls), client_tool],
            mode=mode,
        )
        first = await world.run([user("go")])
        assert first.outcome == "awaiting_client"
        (pending,) = first.pending_calls
        assert pending.owner == "client" and pending.arguments == '{"a":1}'
        assert calls.count() == 1, "executable siblings run; client calls are handed out"
        assert shape(first.messages) == [
            ("assistant", ["tool_call", "tool_call"]),
            ("tool", ["tool_result"]),
        ]
        assert len(world.requests) == 1
        client_result = Message(
            role="tool",
            parts=(ToolResultPart(call_id="c2", output=(TextPart(text="blue"),)),),
        )
        second = await world.run([user("go"), *first.messages, client_result])
        assert second.outcome == "final" and second.text == "blue it is"
        assert shape(world.requests[1].messages) == [
            ("user", ["text"]),
            ("assistant", ["tool_call", "tool_call"]),
            ("tool", ["tool_result", "tool_result"]),
        ]
        assert [r.call_id for r in world.requests[1].messages[2].tool_results] == ["c1", "c2"]
        return first, second, calls.count()

    _, _, count = await both(scenario)
    assert count == 1


# Errors, control flow and limits ----------------------------------------------------


@pytest.mark.parametrize("detailed", [False, True])
async def test_tool_exception(detailed: bool) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "explode")), say("sorry")],
            [failing_tool(calls)],
            {"detailed_errors": detailed},
            mode=mode,
        )
        result = await world.run([user("go")])
        (failed,) = results(result.messages)
        assert failed.outcome == "failed" and "failed" in failed.text
        assert ("kaboom" in failed.text) is detailed
        return result, calls.count()

    _, count = await both(scenario)
    assert count == 1


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"city": 5}', "city"),
        ("{not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ("{}", "city"),
    ],
    ids=["wrong-type", "malformed-json", "not-an-object", "missing-field"],
)
async def test_validation_error(arguments: str, problem: str) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "lookup", arguments)), say("fixed")], [lookup_tool(calls)], mode=mode
        )
        result = await world.run([user("go")])
        (failed,) = results(result.messages)
        assert failed.outcome == "failed" and problem in failed.text
        assert calls.count() == 0, "the function body never runs on invalid arguments"
        return result

    await both(scenario)


async def test_consecutive_error_cap() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "explode")), reply(call("c2", "explode")), say("giving up")],
            [failing_tool(calls)],
            {"limits": Limits(max_consecutive_errors=2)},
            mode=mode,
        )
        result = await world.run([user("go")])
        assert result.outcome == "limit" and result.reason == "max_consecutive_errors"
        assert calls.count() == 2 and len(world.requests) == 3
        assert world.requests[2].tool_choice == ToolChoice(mode="none")
        assert [r.call_id for r in results(result.messages)] == ["c1", "c2"]
        assert result.text == "giving up"
        return result

    await both(scenario)


async def test_error_recovery_resets_counter() -> None:
    flaky_state = {"n": 0}

    @tool
    def flaky() -> str:
        flaky_state["n"] += 1
        if flaky_state["n"] % 2:
            raise RuntimeError("odd")
        return "ok"

    async def scenario(mode: Mode) -> Any:
        script = [reply(call(f"c{i}", "flaky")) for i in range(4)] + [say("done")]
        world = World(script, [flaky], {"limits": Limits(max_consecutive_errors=2)}, mode=mode)
        result = await world.run([user("go")])
        assert result.outcome == "final"
        assert [r.outcome for r in results(result.messages)] == ["failed", "success"] * 2
        return result

    await both(scenario)


@pytest.mark.parametrize("position", ["first", "last"])
async def test_unknown_call_handling(position: str) -> None:
    async def scenario(mode: Mode, terminate: bool) -> Any:
        calls = Calls()
        batch = [call("k", "lookup", '{"city":"A"}'), call("u", "nope")]
        if position == "first":
            batch.reverse()
        world = World(
            [reply(*batch), say("after")],
            [lookup_tool(calls)],
            {"limits": Limits(terminate_on_unknown_calls=terminate)},
            mode=mode,
        )
        result = await world.run([user("go")])
        by_call = {r.call_id: r for r in results(result.messages)}
        assert by_call["u"].outcome == "failed" and "no tool named 'nope'" in by_call["u"].text
        return result, calls.count(), len(world.requests), by_call["k"].outcome

    kept = await both(lambda mode: scenario(mode, False))
    assert kept[0].outcome == "final" and kept[1:] == (1, 2, "success")
    stopped = await both(lambda mode: scenario(mode, True))
    assert stopped[0].outcome == "terminated" and stopped[0].reason == "unknown_tool"
    assert stopped[1:] == (0, 1, "interrupted"), "nothing runs, no further model call"


async def test_middleware_termination() -> None:
    async def stop_on_delete(invocation: ToolInvocation, proceed: NextCall) -> object:
        if invocation.call.name == "delete":
            raise TerminateLoop("stopped by policy")
        return await proceed(invocation)

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        delete = Tool.from_function(lambda: calls("delete"), name="delete")
        world = World(
            [reply(call("a", "lookup", '{"city":"A"}'), call("d", "delete")), say("never")],
            [lookup_tool(calls), delete],
            {"middleware": (stop_on_delete,)},
            mode=mode,
        )
        result = await world.run([user("go")])
        assert result.outcome == "terminated" and result.reason == "middleware"
        assert [(r.call_id, r.text) for r in results(result.messages)] == [
            ("a", "sunny in A"),
            ("d", "stopped by policy"),
        ]
        assert len(world.requests) == 1 and world.model.remaining == 1
        return result, calls.log

    _, log = await both(scenario)
    assert log == [("lookup", {"city": "A"})]


async def test_middleware_wraps_every_execution() -> None:
    seen: list[str] = []

    async def audit(invocation: ToolInvocation, proceed: NextCall) -> object:
        seen.append(f"before {invocation.call.name} {invocation.arguments}")
        value = await proceed(invocation)
        seen.append(f"after {value}")
        return value

    async def scenario(mode: Mode) -> Any:
        world = World(
            [reply(call("a", "lookup", '{"city":"A"}')), say("ok")],
            [lookup_tool(Calls())],
            {"middleware": (audit,)},
            mode=mode,
        )
        return await world.run([user("go")])

    await both(scenario)
    assert seen == ["before lookup {'city': 'A'}", "after sunny in A"] * 2


async def test_maximum_iterations() -> None:
    async def scenario(mode: Mode, blank: bool) -> Any:
        calls = Calls()
        final = (
            reply(TextPart(text="  "), call("c3", "lookup", '{"city":"C"}'))
            if blank
            else say("best effort")
        )
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"A"}')),
                reply(call("c2", "lookup", '{"city":"B"}')),
                final,
            ],
            [lookup_tool(calls)],
            {"limits": Limits(max_iterations=2)},
            mode=mode,
        )
        result = await world.run([user("go")])
        assert result.outcome == "limit" and result.reason == "max_iterations"
        assert world.requests[-1].tool_choice == ToolChoice(mode="none")
        assert [r.tool_choice for r in world.requests[:2]] == [None, None]
        ids = [part.call_id for message in result.messages for part in message.tool_calls]
        assert ids == [r.call_id for r in results(result.messages)] == ["c1", "c2"], (
            "no orphan calls"
        )
        return result, calls.count()

    result, count = await both(lambda mode: scenario(mode, False))
    assert count == 2 and result.text == "best effort"
    blank, count = await both(lambda mode: scenario(mode, True))
    assert count == 2 and blank.text == FALLBACK_TEXT
    assert shape(blank.messages[-2:]) == [("assistant", ["text"]), ("assistant", ["text"])]


async def test_maximum_function_calls() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        batch = [call(f"c{i}", "lookup", f'{{"city":"{i}"}}') for i in range(3)]
        world = World(
            [reply(*batch), reply()],
            [lookup_tool(calls)],
            {"limits": Limits(max_function_calls=2)},
            mode=mode,
        )
        result = await world.run([user("go")])
        assert [r.outcome for r in results(result.messages)] == [
            "success",
            "success",
            "interrupted",
        ]
        assert "function-call limit (2)" in results(result.messages)[2].text
        assert result.outcome == "limit" and result.function_calls == 2
        assert result.text == FALLBACK_TEXT
        return result, calls.count()

    _, count = await both(scenario)
    assert count == 2, "the limit is never exceeded, even inside one batch"


async def test_provider_tool_content_after_an_active_limit() -> None:
    hosted_pair = (
        call("p2", "provider_lookup", "{}", owner="hosted", server_label="srv"),
        HostedToolPart(
            provider="openai", item_type="mcp_call", item={"id": "p2"}, server_label="srv"
        ),
    )
    local_request = ApprovalRequestPart(approval_id="x", call=call("l3", "lookup", "{}"))
    hosted_request = ApprovalRequestPart(
        approval_id="h", call=call("h4", "remote", "{}", owner="hosted", server_label="srv")
    )

    async def scenario(mode: Mode, final_parts: tuple[Any, ...]) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "lookup", '{"city":"A"}')), reply(*final_parts)],
            [lookup_tool(calls)],
            {"limits": Limits(max_iterations=1)},
            mode=mode,
        )
        result = await world.run([user("go")])
        assert calls.count() == 1
        if mode == "stream":
            streamed = [
                event.update.part
                for event in world.runs[0]
                if isinstance(event, ModelUpdate) and isinstance(event.update, PartStarted)
            ]
            assert call("l2", "lookup") not in streamed
            assert all(getattr(part, "call_id", None) != "l2" for part in streamed)
            assert local_request not in streamed
        return result

    dropped = await both(lambda mode: scenario(mode, (call("l2", "lookup", "{}"), local_request)))
    assert [part.call_id for m in dropped.messages for part in m.tool_calls] == ["c1"]
    assert dropped.text == FALLBACK_TEXT
    kept = await both(
        lambda mode: scenario(mode, (call("l2", "lookup"), *hosted_pair, TextPart(text="done")))
    )
    assert shape(kept.messages)[-1] == ("assistant", ["tool_call", "hosted_tool", "text"])
    assert kept.text == "done"
    appended = await both(lambda mode: scenario(mode, hosted_pair))
    assert shape(appended.messages)[-2:] == [
        ("assistant", ["tool_call", "hosted_tool"]),
        ("assistant", ["text"]),
    ]
    assert appended.text == FALLBACK_TEXT
    hosted = await both(lambda mode: scenario(mode, (local_request, hosted_request)))
    assert shape(hosted.messages)[-1] == ("assistant", ["approval_request"])
    assert FALLBACK_TEXT not in [m.text for m in hosted.messages]


async def test_conversation_continuation() -> None:
    async def scenario(mode: Mode, limit: bool) -> Any:
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"A"}'), response_id="resp_1"),
                say("done", response_id="resp_2"),
            ],
            [lookup_tool(Calls())],
            {"service_state": True, "limits": Limits(max_iterations=1 if limit else 5)},
            mode=mode,
        )
        result = await world.run(
            [user("one"), say("earlier").message, user("go")], previous_response_id="resp_0"
        )
        continuations = [request.continuation for request in world.requests]
        assert [c.previous_response_id for c in continuations] == ["resp_0", "resp_1"]
        assert all(c.store for c in continuations)
        assert [shape(r.messages) for r in world.requests] == [
            [("user", ["text"])],
            [("tool", ["tool_result"])],
        ], "only new items are sent"
        return result

    final = await both(lambda mode: scenario(mode, False))
    assert final.response_id == "resp_2"
    stopped = await both(lambda mode: scenario(mode, True))
    assert stopped.outcome == "limit" and stopped.response_id is None, "cleared when the loop stops"


async def test_continuation_and_stateless_give_the_same_transcript() -> None:
    async def scenario(mode: Mode, service_state: bool) -> Any:
        world = World(
            [
                reply(think(), call("c1", "lookup", '{"city":"A"}'), response_id="r1"),
                say("done", response_id="r2"),
            ],
            [lookup_tool(Calls())],
            {"service_state": service_state},
            mode=mode,
        )
        return await world.run([user("go")])

    stateless = await both(lambda mode: scenario(mode, False))
    stateful = await both(lambda mode: scenario(mode, True))
    assert stateless.messages == stateful.messages
    assert stateless.response_id is None and stateful.response_id == "r2"


async def test_usage_is_summed_across_model_calls() -> None:
    async def scenario(mode: Mode) -> Any:
        first = [
            ResponseStarted(),
            PartStarted(index=0, part=call("c1", "lookup", '{"city":"A"}')),
            UsageUpdate(usage=Usage(input_tokens=10, output_tokens=2)),
            ResponseFinished(),
        ]
        second = [
            ResponseStarted(),
            PartStarted(index=0, part=TextPart(text="x")),
            UsageUpdate(usage=Usage(input_tokens=20, output_tokens=3)),
            ResponseFinished(),
        ]
        world = World([first, second], [lookup_tool(Calls())], mode=mode)
        return await world.run([user("go")])

    result = await both(scenario)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 5)


async def test_model_stream_failure_keeps_executed_results() -> None:
    calls = Calls()
    world = World(
        [
            reply(call("c1", "lookup", '{"city":"A"}')),
            [ResponseStarted(), StreamFailed(code="server_error", message="boom", status=500)],
        ],
        [lookup_tool(calls)],
        mode="stream",
    )
    with pytest.raises(ModelStreamError, match="server_error"):
        await world.run([user("go")])
    entries = [await world.ledger.execution("thread", o) for o in ("occ_2",)]
    assert entries[0] is not None and entries[0].state == "completed"
    assert calls.count() == 1


async def test_script_exhaustion_is_loud() -> None:
    world = World([reply(call("c1", "lookup", '{"city":"A"}'))], [lookup_tool(Calls())])
    with pytest.raises(ScriptExhaustedError, match="called 2 times but has 1 entries"):
        await world.run([user("go")])


async def test_cancellation_cancels_running_tools_and_the_stream() -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    @tool
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append("tool")
            raise
        return "never"

    world = World([reply(call("c1", "wait_forever"))], [wait_forever], mode="stream")
    task = asyncio.create_task(world.run([user("go")]))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == ["tool"]
    entry = await world.ledger.execution("thread", "occ_2")
    assert entry is not None and entry.state == "started", "indeterminate, never re-run"


async def test_every_run_ends_with_exactly_one_run_finished() -> None:
    world = World(
        [reply(call("c1", "lookup", '{"city":"A"}')), say("ok")],
        [lookup_tool(Calls())],
        mode="stream",
    )
    await world.run([user("go")])
    finished = [event for event in world.runs[0] if isinstance(event, RunFinished)]
    assert len(finished) == 1 and world.runs[0][-1] is finished[0]
    assert [type(e) for e in world.runs[0] if isinstance(e, ToolStarted | ToolFinished)] == [
        ToolStarted,
        ToolFinished,
    ]
    assert isinstance(world.runs[0][0], ModelUpdate) and isinstance(
        world.runs[0][0].update, ResponseStarted
    )
    assert any(
        isinstance(e, ModelUpdate) and isinstance(e.update, PartFinished) for e in world.runs[0]
    )

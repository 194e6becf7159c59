"""Contract rows about inputs and occurrences: a plain-string input, calls spread over a
response's output items, multi-part results and input follow-ups under a reused call id,
and malformed results in a resume. Streaming and non-streaming agree on every scenario."""

from __future__ import annotations

from typing import Any

from interlock.codecs.openai_responses import decode_response
from interlock.core_loop import NeedsInput, Tool, ToolContext, tool
from interlock.transcript import (
    JsonPart,
    JsonValue,
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.core_loop.harness import (
    Calls,
    Mode,
    World,
    answer,
    both,
    call,
    decide,
    reply,
    results,
    say,
    shape,
    user,
)


def counted_tools(calls: Calls) -> list[Tool]:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        calls("lookup", city=city)
        return f"sunny in {city}"

    @tool(approval="always")
    def delete(path: str) -> str:
        """Delete a path."""
        calls("delete", path=path)
        return f"deleted {path}"

    @tool(approval="always")
    def report(city: str) -> list[TextPart | JsonPart]:
        """A report in two parts: a summary and the data."""
        calls("report", city=city)
        return [TextPart(text=f"report on {city}"), JsonPart(value={"city": city})]

    @tool(approval="always")
    def deploy(target: str, context: ToolContext, region: str | None = None) -> str:
        """Deploy; asks for the region when none is given."""
        if region is None and not context.answers:
            raise NeedsInput("Which region?")
        chosen = region or context.answers[0]
        calls("deploy", target=target, region=chosen)
        return f"deployed {target} to {chosen}"

    return [lookup, delete, report, deploy]


def sent_pairs(messages: tuple[Message, ...]) -> list[tuple[str, str, str | None, str]]:
    """Calls and results a model request carries: (kind, call id, occurrence, content)."""
    pairs: list[tuple[str, str, str | None, str]] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                pairs.append(("call", part.call_id, part.occurrence_id, part.arguments))
            elif isinstance(part, ToolResultPart):
                pairs.append(("result", part.call_id, part.occurrence_id, part.text))
    return pairs


# String input ---------------------------------------------------------------------------


async def test_a_plain_string_input_runs_like_one_user_message() -> None:
    """``run_agent(agent, model, "text")`` is the loop over one user text message: the
    model sees that message, the call runs once, and the transcript is the same as for
    ``[user("text")]``; approvals pause and resume the same way."""

    async def scenario(mode: Mode) -> Any:
        transcripts: list[Any] = []
        for given in ("what is the weather in Rome?", [user("what is the weather in Rome?")]):
            calls = Calls()
            world = World(
                [reply(call("c1", "lookup", '{"city":"Rome"}')), say("sunny")],
                counted_tools(calls),
                mode=mode,
            )
            result = await world.run(given)
            assert world.requests[0].messages == (user("what is the weather in Rome?"),)
            assert result.text == "sunny" and calls.count("lookup") == 1
            transcripts.append((result, [request.messages for request in world.requests]))
        assert transcripts[0] == transcripts[1], "a string is exactly one user message"
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/a"}')), say("done")],
            counted_tools(calls),
            mode=mode,
        )
        paused = await world.run("delete /a")
        assert paused.outcome == "awaiting_approval" and calls.count() == 0
        approval = paused.pending_approvals[0].approval_id
        resumed = await world.run([user("delete /a"), *paused.messages, decide((approval, True))])
        assert [r.text for r in results(resumed.messages)] == ["deleted /a"]
        assert calls.count("delete") == 1
        return transcripts[0], resumed

    await both(scenario)


# Calls across response messages ---------------------------------------------------------

SPREAD_RESPONSE: dict[str, JsonValue] = {
    "id": "resp_spread",
    "object": "response",
    "created_at": 0,
    "status": "completed",
    "model": "test-model",
    "output": [
        {
            "type": "message",
            "id": "msg_a",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking A.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "c1",
            "name": "lookup",
            "arguments": '{"city":"A"}',
            "status": "completed",
        },
        {
            "type": "message",
            "id": "msg_b",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Then B, and a cleanup.", "annotations": []}
            ],
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "c2",
            "name": "lookup",
            "arguments": '{"city":"B"}',
            "status": "completed",
        },
        {
            "type": "function_call",
            "id": "fc_3",
            "call_id": "c3",
            "name": "delete",
            "arguments": '{"path":"/a"}',
            "status": "completed",
        },
    ],
}


async def test_calls_spread_over_output_messages_each_run_once() -> None:
    """A Responses answer whose calls sit in separate output items, between message items,
    is one batch: every local call runs exactly once (the approval-required one after its
    approval, with its siblings), and the next request pairs each call with one result.
    The caller may keep that answer as one assistant message per output item; the resume
    still finds every call and runs nothing twice."""
    response = decode_response(SPREAD_RESPONSE)

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        script = [response, say("all done"), say("you're welcome")]
        world = World(script, counted_tools(calls), mode=mode)
        first = await world.run([user("check A and B, clean up")])
        assert first.outcome == "awaiting_approval" and calls.count() == 0
        (answered, *controls) = first.messages
        split = [Message(role="assistant", parts=(part,)) for part in answered.parts]
        approval = first.pending_approvals[0].approval_id
        resume = [user("check A and B, clean up"), *split, *controls, decide((approval, True))]
        second = await world.run(resume)
        assert [(r.call_id, r.text) for r in results(second.messages)] == [
            ("c1", "sunny in A"),
            ("c2", "sunny in B"),
            ("c3", "deleted /a"),
        ]
        sent = sent_pairs(world.requests[-1].messages)
        assert [(kind, call_id) for kind, call_id, _, _ in sent] == [
            ("call", "c1"),
            ("result", "c1"),
            ("call", "c2"),
            ("result", "c2"),
            ("call", "c3"),
            ("result", "c3"),
        ], "each call once, right after it its result"
        assert len({occurrence for _, _, occurrence, _ in sent}) == 3
        third = await world.run([*resume, *second.messages, user("thanks")])
        assert third.text == "you're welcome" and results(third.messages) == []
        return second, third, calls.log

    _, _, log = await both(scenario)
    assert sorted(name for name, _ in log) == ["delete", "lookup", "lookup"]


# Multi-content result with reused id ----------------------------------------------------


async def test_a_multi_part_result_stays_with_its_occurrence_under_a_reused_id() -> None:
    """Two approved rounds reuse call id ``c1``. The first execution asks a question and
    then returns two parts; the second returns two other parts. Each occurrence keeps
    exactly its own parts, its question stays with it, and the model sees two pairs."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "deploy", '{"target":"web"}')),
                say("deployed"),
                reply(call("c1", "report", '{"city":"Oslo"}')),
                say("reported"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        history: list[Message] = [user("deploy web")]
        first = await world.run(history)
        history += [*first.messages, decide((first.pending_approvals[0].approval_id, True))]
        asked = await world.run(history)
        (question,) = asked.pending_inputs
        history += [*asked.messages, answer(question.request_id, "eu-west")]
        done = await world.run(history)
        history += [*done.messages, user("now a report on Oslo")]
        third = await world.run(history)
        history += [*third.messages, decide((third.pending_approvals[0].approval_id, True))]
        fourth = await world.run(history)
        (deployed,) = results(done.messages)
        (reported,) = results(fourth.messages)
        assert deployed.output == (TextPart(text="deployed web to eu-west"),)
        assert reported.output == (
            TextPart(text="report on Oslo"),
            JsonPart(value={"city": "Oslo"}),
        )
        first_occurrence = first.pending_approvals[0].call.occurrence_id
        second_occurrence = third.pending_approvals[0].call.occurrence_id
        assert question.occurrence_id == deployed.occurrence_id == first_occurrence
        assert reported.occurrence_id == second_occurrence != first_occurrence
        sent = world.requests[-1].messages
        assert [(k, c, o) for k, c, o, _ in sent_pairs(sent)] == [
            ("call", "c1", first_occurrence),
            ("result", "c1", first_occurrence),
            ("call", "c1", second_occurrence),
            ("result", "c1", second_occurrence),
        ]
        tool_results = [part for m in sent for part in m.tool_results]
        assert [r.output for r in tool_results] == [deployed.output, reported.output]
        assert "input_request" not in {kind for _, kinds in shape(sent) for kind in kinds}
        return fourth, calls.log

    _, log = await both(scenario)
    assert log == [("deploy", {"target": "web", "region": "eu-west"}), ("report", {"city": "Oslo"})]


# Follow-up request closes one occurrence ------------------------------------------------


async def test_answering_a_follow_up_leaves_a_later_reused_id_approval_pending() -> None:
    """Occurrence 1 of ``c1`` is approved and asks a question. Before the answer, an
    unrelated turn makes the model call ``c1`` again (occurrence 2, awaiting approval).
    The answer finishes occurrence 1 only: occurrence 2 does not run, its approval stays
    open, and deciding it later runs it once."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "deploy", '{"target":"web"}')),
                reply(call("c1", "deploy", '{"target":"api","region":"us"}')),
                say("web is deployed"),
                say("api is deployed"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        history: list[Message] = [user("deploy web")]
        first = await world.run(history)
        history += [*first.messages, decide((first.pending_approvals[0].approval_id, True))]
        asked = await world.run(history)
        (question,) = asked.pending_inputs
        history += [*asked.messages, user("also deploy api")]
        other = await world.run(history)
        (second_approval,) = other.pending_approvals
        assert second_approval.call.occurrence_id != question.occurrence_id
        history += [*other.messages, answer(question.request_id, "eu")]
        answered = await world.run(history)
        assert [(r.occurrence_id, r.text) for r in results(answered.messages)] == [
            (question.occurrence_id, "deployed web to eu")
        ]
        assert calls.log == [("deploy", {"target": "web", "region": "eu"})]
        record = await world.ledger.approval("thread", second_approval.approval_id)
        assert record is not None and record.live, "the later occurrence's approval is open"
        sent = sent_pairs(world.requests[-1].messages)
        assert [occurrence for _, _, occurrence, _ in sent] == [question.occurrence_id] * 2
        history += [*answered.messages, decide((second_approval.approval_id, True))]
        last = await world.run(history)
        assert [(r.occurrence_id, r.text) for r in results(last.messages)] == [
            (second_approval.call.occurrence_id, "deployed api to us")
        ]
        return last, calls.log

    _, log = await both(scenario)
    assert [arguments["target"] for _, arguments in log] == ["web", "api"]


# Missing result call id -----------------------------------------------------------------


async def test_a_result_without_a_call_id_takes_no_approvals_result() -> None:
    """A resume carrying, next to its decisions, a result whose call id is empty (or names
    no call) changes nothing: each approved call runs once and gets its own result, and
    the malformed results never reach the model."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}'), call("c2", "delete", '{"path":"/b"}')),
                say("both deleted"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete /a and /b")])
        stray: tuple[Part, ...] = (
            ToolResultPart(call_id="", output=(TextPart(text="stolen"),)),
            ToolResultPart(call_id="nowhere", output=(TextPart(text="stolen too"),)),
        )
        decisions = decide(*((a.approval_id, True) for a in first.pending_approvals))
        resume = Message(role="user", parts=(*stray, *decisions.parts))
        second = await world.run([user("delete /a and /b"), *first.messages, resume])
        assert [(r.call_id, r.text) for r in results(second.messages)] == [
            ("c1", "deleted /a"),
            ("c2", "deleted /b"),
        ]
        sent = sent_pairs(world.requests[-1].messages)
        assert [(kind, call_id, text) for kind, call_id, _, text in sent] == [
            ("call", "c1", '{"path":"/a"}'),
            ("call", "c2", '{"path":"/b"}'),
            ("result", "c1", "deleted /a"),
            ("result", "c2", "deleted /b"),
        ]
        return second, calls.log

    _, log = await both(scenario)
    assert log == [("delete", {"path": "/a"}), ("delete", {"path": "/b"})]

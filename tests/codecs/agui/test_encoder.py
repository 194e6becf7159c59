"""The outbound encoder: golden traces, the verification rules, and round trips."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from ag_ui.core import Event
from pydantic import TypeAdapter

from interlock.codecs._sse import SseEvent
from interlock.codecs.agui import (
    AguiEventEncoder,
    EncoderStateError,
    SealError,
    decode_run_input,
    open_sealed,
    verify_events,
)
from interlock.codecs.openai_chat import StreamDecoder as ChatStreamDecoder
from interlock.transcript import (
    ApprovalRequestPart,
    HostedToolPart,
    InputRequestPart,
    JsonObject,
    MediaPart,
    Message,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    Response,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Update,
    Usage,
    UsageUpdate,
    response_to_updates,
)

from .client_model import apply_events
from .scenarios import (
    DELETE,
    ENCRYPTED,
    KEY,
    SCENARIOS,
    SIGNATURE,
    WEATHER,
    encoder,
    feed,
    streamed_text,
    trace_path,
)

EVENT = TypeAdapter(Event)


def types(events: list[JsonObject]) -> list[str]:
    return [str(event["type"]) for event in events]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden_traces(name: str) -> None:
    expected = [json.loads(line) for line in trace_path(name).read_text("utf-8").splitlines()]
    assert SCENARIOS[name]() == expected


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_trace_passes_the_verification_rules(name: str) -> None:
    events = SCENARIOS[name]()
    verify_events(events, thread_id="thread-1", run_id="run-1")
    for event in events:
        EVENT.validate_python(event)
        assert isinstance(event["timestamp"], int)


def test_without_a_clock_there_are_no_timestamps() -> None:
    run = AguiEventEncoder(thread_id="t", run_id="r")
    events = run.start() + run.finish()
    assert all("timestamp" not in event for event in events)
    assert events[0] == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
    }


def test_nothing_is_left_open_at_finish() -> None:
    run = encoder()
    events = run.start()
    events += feed(
        run,
        [
            ResponseStarted(),
            PartStarted(index=0, part=ReasoningPart(reasoning_kind="raw", text="hm")),
            PartStarted(index=1, part=TextPart(text="partial")),
            PartStarted(index=2, part=ToolCallPart(call_id="c", name="f", arguments="{")),
        ],
    )
    events += run.finish()
    verify_events(events)
    assert "REASONING_END" in types(events)  # the span closed when the text began
    assert types(events)[-4:] == [
        "REASONING_MESSAGE_END",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]


def test_deltas_are_never_empty() -> None:
    run = encoder()
    run.start()
    events = feed(
        run,
        [
            PartStarted(index=0, part=TextPart(text="")),
            PartDelta(index=0, delta=""),
            PartStarted(index=1, part=ToolCallPart(call_id="c", name="f")),
            PartDelta(index=1, delta=""),
        ],
    )
    assert types(events) == ["TEXT_MESSAGE_START", "TOOL_CALL_START"]


def test_a_final_part_completes_what_the_deltas_missed() -> None:
    run = encoder()
    run.start()
    events = feed(
        run,
        [
            PartStarted(index=0, part=TextPart(text="")),
            PartDelta(index=0, delta="Hel"),
            PartFinished(index=0, part=TextPart(text="Hello")),
            PartFinished(index=0, part=TextPart(text="Hello")),
        ],
    )
    assert [event.get("delta") for event in events if event["type"] == "TEXT_MESSAGE_CONTENT"] == [
        "Hel",
        "lo",
    ]
    assert types(events).count("TEXT_MESSAGE_END") == 1


def test_a_part_finished_without_a_start_is_streamed_whole() -> None:
    run = encoder()
    run.start()
    events = feed(run, [PartFinished(index=0, part=WEATHER)])
    assert types(events) == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert events[1]["delta"] == WEATHER.arguments


RESPONSE = Response(
    message=Message(
        role="assistant",
        parts=(
            ReasoningPart(
                reasoning_kind="summary", text="Think.", opaque=ENCRYPTED, item_id="rs_1"
            ),
            TextPart(text="Let me check."),
            replace(WEATHER, signature=SIGNATURE),
            ToolCallPart(call_id="call_2", name="get_time", arguments='{"tz":"CET"}'),
        ),
    ),
    model="gpt-5",
    usage=Usage(input_tokens=5, output_tokens=7),
    finish_reason="tool_calls",
)


def _streamed(response: Response) -> list[Update]:
    """The same response as a provider would stream it: tiny deltas, payloads at the end."""
    updates: list[Update] = [ResponseStarted(model=response.model)]
    for index, part in enumerate(response.message.parts):
        if isinstance(part, TextPart | ReasoningPart):
            updates.append(
                PartStarted(
                    index=index,
                    part=replace(part, text="", opaque=None)
                    if isinstance(part, ReasoningPart)
                    else replace(part, text=""),
                )
            )
            updates += [PartDelta(index=index, delta=char) for char in part.text]
        elif isinstance(part, ToolCallPart):
            updates.append(
                PartStarted(index=index, part=replace(part, arguments="", signature=None))
            )
            updates += [PartDelta(index=index, delta=char) for char in part.arguments]
        updates.append(PartFinished(index=index, part=part))
    assert response.usage is not None
    return [
        *updates,
        UsageUpdate(usage=response.usage),
        ResponseFinished(finish_reason="tool_calls"),
    ]


def _client_messages(updates: list[Update]) -> list[JsonObject]:
    run = encoder()
    events = run.start() + feed(run, updates) + run.finish()
    verify_events(events)
    return apply_events([], events)


def test_streaming_and_non_streaming_reach_the_same_client_state() -> None:
    assert _client_messages(_streamed(RESPONSE)) == _client_messages(response_to_updates(RESPONSE))


def test_what_the_client_sends_back_decodes_to_the_model_step() -> None:
    held = _client_messages(response_to_updates(RESPONSE))
    decoded = decode_run_input(
        {"threadId": "thread-1", "runId": "run-2", "messages": held}, seal_key=KEY, tenant="acme"
    )
    (message,) = decoded.messages
    assert message.id == "run-1:a1"
    stripped = tuple(replace(part, extra={}) for part in message.parts)
    assert stripped == RESPONSE.message.parts


LABELLED = Message(
    role="assistant",
    parts=(
        ReasoningPart(reasoning_kind="raw", text="Is it allowed?", item_id="rs_raw"),
        TextPart(text="Here it is. "),
        RefusalPart(text="Not the password, though."),
        TextPart(text="", signature=SIGNATURE),
        ToolCallPart(
            call_id="mcp_1", name="ask", arguments="{}", owner="hosted", server_label="wiki"
        ),
    ),
)


def test_what_agui_has_no_field_for_comes_back_from_the_client() -> None:
    """Refusals, part boundaries, raw reasoning and hosted owners ride in metadata labels."""
    updates = _streamed(Response(message=LABELLED, usage=Usage()))
    held = _client_messages(updates)
    assert held == _client_messages(response_to_updates(Response(message=LABELLED)))
    decoded = decode_run_input(
        {"threadId": "thread-1", "runId": "run-2", "messages": held}, seal_key=KEY, tenant="acme"
    )
    (message,) = decoded.messages
    assert tuple(replace(part, extra={}) for part in message.parts) == LABELLED.parts


@pytest.mark.parametrize("outcome", ["failed", "denied"])
def test_a_streamed_failure_keeps_its_outcome(outcome: str) -> None:
    """``TOOL_CALL_RESULT`` has no ``error`` field: the outcome label carries it."""
    run = encoder()
    events = run.start() + feed(
        run, response_to_updates(Response(message=Message(role="assistant", parts=(WEATHER,))))
    )
    failed = ToolResultPart(call_id="call_1", output=(TextPart(text="no"),), outcome=outcome)  # type: ignore[arg-type]  # literal
    events += run.tool_result(failed) + run.finish()
    verify_events(events)
    held = apply_events([], events)
    decoded = decode_run_input(
        {"threadId": "thread-1", "runId": "run-2", "messages": held}, seal_key=KEY, tenant="acme"
    )
    assert decoded.messages[-1].tool_results[0].outcome == outcome


def test_no_labels_when_the_events_say_it_all() -> None:
    run = encoder()
    events = run.start() + feed(run, response_to_updates(RESPONSE)) + run.finish()
    assert not any("metadata" in event for event in events)


def test_opaque_payloads_leave_only_sealed() -> None:
    run = encoder()
    events = run.start() + feed(run, response_to_updates(RESPONSE))
    sealed = [event for event in events if event["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert [(event["subtype"], event["entityId"]) for event in sealed] == [
        ("message", "run-1:r3"),
        ("tool-call", "call_1"),
    ]
    assert "gAAAAB-enc" not in json.dumps(events)
    opened = open_sealed(str(sealed[0]["encryptedValue"]), key=KEY, tenant="acme")
    assert opened.opaque == ENCRYPTED
    assert opened.attributes == {"kind": "summary", "itemId": "rs_1"}


def test_opaque_without_a_seal_key_is_refused() -> None:
    run = AguiEventEncoder(thread_id="t", run_id="r")
    run.start()
    with pytest.raises(SealError):
        feed(run, response_to_updates(RESPONSE))


def test_a_second_signed_text_gets_its_own_message() -> None:
    run = encoder()
    run.start()
    events = feed(
        run,
        [
            PartFinished(index=0, part=TextPart(text="a", signature=SIGNATURE)),
            PartFinished(index=1, part=TextPart(text="b", signature=SIGNATURE)),
        ],
    )
    sealed_ids = [
        event["entityId"] for event in events if event["type"] == "REASONING_ENCRYPTED_VALUE"
    ]
    assert len(set(sealed_ids)) == 2
    assert run.message_ids == tuple(sealed_ids)


def test_each_model_step_gets_its_own_assistant_message() -> None:
    run = encoder()
    run.start()
    events = feed(
        run,
        [ResponseStarted(), *streamed_text(0, "one"), ResponseStarted(), *streamed_text(0, "two")],
    )
    starts = [event["messageId"] for event in events if event["type"] == "TEXT_MESSAGE_START"]
    assert starts == list(run.message_ids) and len(set(starts)) == 2


def test_usage_is_summed_per_model_and_reported_on_errors_too() -> None:
    run = encoder()
    run.start()
    feed(
        run,
        [
            ResponseStarted(model="a"),
            UsageUpdate(usage=Usage(input_tokens=1, output_tokens=2)),
            ResponseFinished(),
        ],
    )
    feed(
        run, [ResponseStarted(model="b"), UsageUpdate(usage=Usage(input_tokens=3, output_tokens=4))]
    )
    (error,) = run.fail("upstream timed out", code="UPSTREAM_TIMEOUT")
    assert error["code"] == "UPSTREAM_TIMEOUT"
    assert error["usage"] == [
        {"model": "a", "inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
        {"model": "b", "inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
    ]


def test_a_stream_failure_ends_the_run_with_run_error() -> None:
    run = encoder()
    events = run.start() + feed(
        run,
        [
            PartStarted(index=0, part=TextPart(text="x")),
            StreamFailed(code="UPSTREAM_CUT", message="stream cut"),
        ],
    )
    verify_events(events)
    assert events[-1]["type"] == "RUN_ERROR" and run.ended
    with pytest.raises(EncoderStateError):
        run.finish()


def test_lifecycle_is_enforced() -> None:
    run = encoder()
    with pytest.raises(EncoderStateError):
        run.encode(ResponseStarted())
    run.start()
    with pytest.raises(EncoderStateError):
        run.start()
    with pytest.raises(EncoderStateError):
        run.encode(PartDelta(index=3, delta="x"))
    run.finish()
    for late in (
        lambda: run.finish(),
        lambda: run.fail("x"),
        lambda: run.tool_result(ToolResultPart(call_id="c")),
    ):
        with pytest.raises(EncoderStateError):
            late()


def test_run_error_may_be_the_first_event() -> None:
    events = encoder().fail("bad input", code="INVALID_INPUT")
    verify_events(events, strict=True)
    assert events[0]["message"] == "bad input"


def test_interrupt_style_ends_with_the_interrupt() -> None:
    events = SCENARIOS["approval_interrupt"]()
    outcome = events[-1]["outcome"]
    assert isinstance(outcome, dict) and outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]  # type: ignore[misc]  # JSON list
    assert interrupt["id"] == "approval:ap_1" and interrupt["toolCallId"] == "call_9"
    assert "TOOL_CALL_RESULT" not in types(events)


def test_confirm_changes_style_hands_the_confirmation_to_the_client() -> None:
    events = SCENARIOS["approval_confirm_changes"]()
    start = next(
        e
        for e in events
        if e["type"] == "TOOL_CALL_START" and e["toolCallName"] == "confirm_changes"
    )
    real = next(e for e in events if e["type"] == "TOOL_CALL_START" and e["toolCallId"] == "call_9")
    assert start["parentMessageId"] == real["parentMessageId"]
    assert events[-1]["outcome"] == {
        "type": "success",
        "pendingToolCallIds": ["confirm_changes:ap_1"],
    }


def test_a_resurfaced_approval_gets_a_fresh_parent_message() -> None:
    run = encoder("confirm_changes")
    events = run.start() + run.approval_request(
        ApprovalRequestPart(approval_id="ap_2", call=DELETE)
    )
    events += run.finish()
    verify_events(events)
    assert events[1]["parentMessageId"] == "run-1:a1"


def test_input_requests_interrupt_in_both_styles() -> None:
    request = InputRequestPart(request_id="q", occurrence_id="o", call_id="c", prompt="Color?")
    for style in ("interrupt", "confirm_changes"):
        run = encoder(style)  # type: ignore[arg-type]  # literal loop
        events = run.start() + run.input_request(request) + run.finish()
        outcome = events[-1]["outcome"]
        assert isinstance(outcome, dict) and outcome["type"] == "interrupt"


def test_frontend_calls_answered_in_the_run_are_not_pending() -> None:
    run = encoder(client_tools=frozenset({"ui"}))
    run.start()
    feed(
        run,
        [
            PartFinished(index=0, part=ToolCallPart(call_id="a", name="ui")),
            PartFinished(index=1, part=ToolCallPart(call_id="b", name="ui", owner="client")),
        ],
    )
    run.tool_result(ToolResultPart(call_id="a"))
    assert run.finish()[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["b"]}


def test_pending_ids_can_be_given_explicitly_and_cancel_wins() -> None:
    run = encoder()
    run.start()
    assert run.finish(pending_tool_call_ids=["x"])[-1]["outcome"] == {
        "type": "success",
        "pendingToolCallIds": ["x"],
    }
    none_pending = encoder(client_tools=frozenset({"ui"}))
    none_pending.start()
    feed(none_pending, [PartFinished(index=0, part=ToolCallPart(call_id="a", name="ui"))])
    assert none_pending.finish(pending_tool_call_ids=[])[-1]["outcome"] == {"type": "success"}
    cancelled = encoder()
    cancelled.start()
    cancelled.input_request(
        InputRequestPart(request_id="q", occurrence_id="o", call_id="c", prompt="?")
    )
    assert cancelled.finish(outcome="cancelled")[-1]["outcome"] == {"type": "cancelled"}


def test_tool_results_close_the_call_and_carry_media() -> None:
    run = encoder()
    run.start()
    feed(run, [PartStarted(index=0, part=WEATHER)])
    result = ToolResultPart(
        call_id="call_1",
        output=(TextPart(text="chart"), MediaPart(media_type="image/png", data="iVBO")),
    )
    events = run.tool_result(result)
    assert types(events) == ["TOOL_CALL_END", "TOOL_CALL_RESULT"]
    assert events[1]["content"] == [
        {"type": "text", "text": "chart"},
        {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
    ]
    EVENT.validate_python(events[1])


def test_state_messages_and_custom_events() -> None:
    run = encoder()
    run.start()
    assert run.state_delta([]) == []
    with pytest.raises(ValueError, match="from"):
        run.state_delta([{"op": "move", "path": "/a"}])
    with pytest.raises(ValueError, match="op"):
        run.state_delta([{"op": "merge", "path": "/a"}])
    events = run.state_snapshot({"doc": ""}) + run.state_delta(
        [{"op": "replace", "path": "/doc", "value": "x"}]
    )
    events += run.messages_snapshot([{"id": "u", "role": "user", "content": "hi"}])
    events += run.custom("note", None)
    for event in events:
        EVENT.validate_python(event)
    assert events[-1]["value"] is None


def test_parts_without_an_ag_ui_event_travel_as_custom() -> None:
    run = encoder()
    run.start()
    hosted = HostedToolPart(provider="openai", item_type="web_search_call", item={"id": "ws_1"})
    events = feed(run, [PartStarted(index=0, part=hosted), PartFinished(index=0, part=hosted)])
    assert len(events) == 1 and events[0]["type"] == "CUSTOM"
    assert events[0]["name"] == "interlock.part"
    assert events[0]["value"]["item_type"] == "web_search_call"  # type: ignore[index]  # JSON object


def test_reasoning_content_from_a_chat_upstream_ends_before_its_span_closes() -> None:
    """A DeepSeek-style Chat stream (``reasoning_content`` then ``content``), decoded by the
    Chat codec and encoded for AG-UI: the reasoning message ends before the reasoning span
    does, and both before the answer's text starts."""
    chunks: list[JsonObject] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "hm"}}]},
        {"choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    decoder = ChatStreamDecoder()
    updates: list[Update] = []
    for chunk in chunks:
        updates += decoder.feed(SseEvent(data=json.dumps(chunk)))
    updates += decoder.feed(SseEvent(data="[DONE]")) + decoder.finish()
    run = encoder()
    events = run.start() + feed(run, updates) + run.finish()
    verify_events(events, thread_id="thread-1", run_id="run-1")
    kinds = [event["type"] for event in events]
    assert kinds.index("REASONING_MESSAGE_END") < kinds.index("REASONING_END")
    assert kinds.index("REASONING_END") < kinds.index("TEXT_MESSAGE_START")

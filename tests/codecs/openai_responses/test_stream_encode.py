"""Stream encoding: official sequence, SDK-parseable, re-decodes to the same response."""

from __future__ import annotations

import json

import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from interlock.codecs.openai_responses import (
    StreamDecoder,
    StreamEncoder,
    decode_response,
    encode_response,
)
from interlock.transcript import (
    HostedToolPart,
    Message,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    Response,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    fold_updates,
    response_to_updates,
)
from tests.codecs.openai_responses._fixtures import load, names, trace

EVENTS: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)


def reencode(name: str) -> list[dict[str, object]]:
    decoder, encoder = StreamDecoder(), StreamEncoder()
    out = []
    for event in trace(name):
        for update in decoder.feed(event):
            out.extend(encoder.encode(update))
    out.extend(encoder.finish())
    for event in out:
        assert event.event == json.loads(event.data)["type"]
    return [json.loads(event.data) for event in out]


@pytest.mark.parametrize("name", names("stream_"))
def test_decode_then_encode_gives_an_sdk_valid_equivalent_stream(name: str) -> None:
    events = reencode(name)
    for event in events:
        EVENTS.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    original_final = json.loads(trace(name)[-1].data)["response"]
    assert decode_response(events[-1]["response"]) == decode_response(original_final)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", names("response_"))
def test_response_streams_as_the_official_sequence(name: str) -> None:
    response = decode_response(load(name))
    encoder = StreamEncoder()
    events = [
        e for u in response_to_updates(response) for e in encoder.encode(u)
    ] + encoder.finish()
    payloads = [json.loads(e.data) for e in events]
    types = [p["type"] for p in payloads]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] in ("response.completed", "response.incomplete")
    assert (
        types.count("response.output_item.added")
        == types.count("response.output_item.done")
        == len(load(name)["output"])
    )
    assert payloads[-1]["response"] == encode_response(response)
    for payload in payloads:
        EVENTS.validate_python(payload)
    decoder = StreamDecoder()
    assert fold_updates([u for e in events for u in decoder.feed(e)]) == response


def test_snapshots_of_a_response_without_time_or_model_are_sdk_valid() -> None:
    """``response.created`` / ``in_progress`` / ``completed`` all carry a full ``Response``."""
    response = Response(
        message=Message(role="assistant", parts=(ToolCallPart(call_id="c", name="f"),)),
        finish_reason="tool_calls",
    )
    encoder = StreamEncoder()
    events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
    payloads = [json.loads(e.data) for e in events + encoder.finish()]
    snapshots = [payload for payload in payloads if "response" in payload]
    assert len(snapshots) == 3
    for payload in snapshots:
        EVENTS.validate_python(payload)
        assert (payload["response"]["created_at"], payload["response"]["model"]) == (0, "")


def test_failure_is_an_error_event() -> None:
    encoder = StreamEncoder()
    [event] = encoder.encode(StreamFailed(code="server_error", message="boom"))
    assert event.event == "error" and json.loads(event.data)["message"] == "boom"
    assert encoder.finish() == []


_WHERE = ["type", "item_id", "output_index"]
DELTA_KEYS = {
    "response.reasoning_summary_text.delta": [*_WHERE, "summary_index", "delta", "sequence_number"],
    "response.reasoning_text.delta": [*_WHERE, "content_index", "delta", "sequence_number"],
    "response.output_text.delta": [
        *_WHERE,
        "content_index",
        "delta",
        "logprobs",
        "sequence_number",
    ],
    "response.refusal.delta": [*_WHERE, "content_index", "delta", "sequence_number"],
    "response.function_call_arguments.delta": [*_WHERE, "delta", "sequence_number"],
}
AWKWARD = ["plain ", 'quote " and \\ backslash', "é ü 日本", "line\nbreak\u2028sep", "\x00\x1f", ""]


def test_delta_events_are_the_compact_json_of_the_event_object() -> None:
    """Delta events are built from a per-part template; they must equal a full encoding."""
    parts = (
        ReasoningPart(reasoning_kind="summary", text="", item_id="rs_1"),
        ReasoningPart(reasoning_kind="raw", text="", item_id="rs_1"),
        TextPart(text="", item_id="msg_1"),
        RefusalPart(text="", item_id="msg_1"),
        ToolCallPart(call_id="call_1", name="f", item_id="fc_1"),
    )
    encoder = StreamEncoder()
    events = encoder.encode(ResponseStarted(id="resp_1", model="m"))
    for index, part in enumerate(parts):
        events += encoder.encode(PartStarted(index=index, part=part))
        for delta in AWKWARD:
            events += encoder.encode(PartDelta(index=index, delta=delta))
        events += encoder.encode(PartFinished(index=index, part=part))
    events += encoder.finish()
    deltas = [event for event in events if event.event and event.event.endswith(".delta")]
    assert len(deltas) == len(parts) * len(AWKWARD)
    assert {event.event for event in deltas} == set(DELTA_KEYS)
    for event in deltas:
        payload = json.loads(event.data)
        assert event.data == json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        assert list(payload) == DELTA_KEYS[event.event]
    assert [json.loads(event.data)["delta"] for event in deltas] == AWKWARD * len(parts)
    final = json.loads(events[-1].data)["response"]
    assert [item["id"] for item in final["output"]] == ["rs_1", "msg_1", "fc_1"]
    assert [e["sequence_number"] for e in map(json.loads, (e.data for e in events))] == list(
        range(len(events))
    )


def test_a_dropped_hosted_item_ends_the_message_before_it_streamed_as_whole() -> None:
    """Another provider's hosted item (Gemini code execution) has no Responses output type:
    the texts on either side stay two messages in a stream, as in a whole answer."""
    code = HostedToolPart(provider="google", item_type="executableCode", item={"code": "print(1)"})
    message = Message(role="assistant", parts=(TextPart(text="a"), code, TextPart(text="b")))
    response = Response(message=message, id="resp_1", finish_reason="stop")
    whole = encode_response(response)["output"]
    encoder = StreamEncoder()
    events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
    done = [json.loads(e.data) for e in events if e.event == "response.output_item.done"]
    assert [event["item"]["type"] for event in done] == [item["type"] for item in whole]  # type: ignore[union-attr, index]  # wire JSON
    assert len(done) == 2

"""Streams: decode golden traces, re-encode, SDK parsing, signatures never merged."""

from __future__ import annotations

import json

import pytest

from interlock.codecs import gemini
from interlock.codecs._sse import SseEvent, SseParser, format_sse
from interlock.codecs.gemini._wire import signature
from interlock.transcript import (
    DecodeError,
    JsonObject,
    Message,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    Response,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    Update,
    Usage,
    UsageUpdate,
    fold_updates,
    response_to_updates,
)
from tests.codecs.gemini.wire_fixtures import fixture_names, load_stream, validate_response

STREAMS = fixture_names("stream_", ".jsonl")
SIGNATURE = signature("c2lnbmF0dXJl")


def decode_trace(chunks: list[JsonObject]) -> list[Update]:
    decoder = gemini.StreamDecoder()
    wire = "".join(format_sse(json.dumps(chunk)) for chunk in chunks)
    parser = SseParser()
    updates: list[Update] = []
    for event in parser.feed(wire.encode()) + parser.finish():
        updates.extend(decoder.feed(event))
    updates.extend(decoder.finish())
    return updates


def encode_updates(updates: list[Update]) -> list[JsonObject]:
    encoder = gemini.StreamEncoder()
    events: list[SseEvent] = []
    for update in updates:
        events.extend(encoder.encode(update))
    events.extend(encoder.finish())
    return [json.loads(event.data) for event in events]


@pytest.mark.parametrize("name", STREAMS)
def test_stream_decode_reencode_decode_is_stable(name: str) -> None:
    first = fold_updates(decode_trace(load_stream(name)))
    chunks = encode_updates(decode_trace(load_stream(name)))
    for chunk in chunks:
        validate_response(chunk)
    assert fold_updates(decode_trace(chunks)) == first


@pytest.mark.parametrize("name", STREAMS)
def test_stream_fold_matches_the_non_streaming_codec(name: str) -> None:
    folded = fold_updates(decode_trace(load_stream(name)))
    again = gemini.decode_response(gemini.encode_response(folded))
    assert again.message.parts == folded.message.parts
    assert (again.finish_reason, again.native_finish_reason) == (
        folded.finish_reason,
        folded.native_finish_reason,
    )
    assert again.usage == folded.usage


def test_text_stream_merges_fragments_and_keeps_the_trailing_signature_part() -> None:
    updates = decode_trace(load_stream("stream_text.jsonl"))
    response = fold_updates(updates)
    thought, text, carrier = response.message.parts
    assert isinstance(thought, ReasoningPart) and thought.reasoning_kind == "summary"
    assert thought.text.startswith("**Planning**")
    assert text == TextPart(text="The answer is 42.")
    assert isinstance(carrier, ReasoningPart) and carrier.reasoning_kind == "encrypted"
    assert (
        carrier.opaque is not None
        and carrier.opaque.data
        == load_stream("stream_text.jsonl")[-1]["candidates"][0]["content"]["parts"][0][
            "thoughtSignature"
        ]
    )  # pyright: ignore[reportIndexIssue, reportArgumentType, reportCallIssue]
    assert [type(update) for update in updates].count(PartDelta) == 1
    usages = [update.usage for update in updates if isinstance(update, UsageUpdate)]
    assert len(usages) == 2 and response.usage == usages[-1]
    assert response.usage == Usage(input_tokens=15, output_tokens=196, reasoning_tokens=190)
    assert isinstance(updates[0], ResponseStarted) and updates[0].id == "rsp-1"
    assert isinstance(updates[-1], ResponseFinished)
    assert response.finish_reason == "stop"


def test_signed_fragment_is_never_merged_with_unsigned_text() -> None:
    """Traps 6/7: the signed fragment stays its own part; text after it is a new part."""
    response = fold_updates(decode_trace(load_stream("stream_signed_fragment.jsonl")))
    first, signed, after = response.message.parts
    assert first == TextPart(text="First ")
    assert isinstance(signed, TextPart) and signed.text == "part." and signed.signature is not None
    assert after == TextPart(text=" After the signature.")
    assert (response.finish_reason, response.native_finish_reason) == ("length", "MAX_TOKENS")


def test_parallel_calls_in_separate_chunks_become_separate_parts() -> None:
    """Trap 22: whole calls, no index; each is its own part, ids minted per position."""
    response = fold_updates(decode_trace(load_stream("stream_parallel_calls.jsonl")))
    calls = response.message.parts
    assert all(isinstance(call, ToolCallPart) for call in calls)
    assert [call.call_id for call in calls] == ["gcall_rsp-2_0", "gcall_rsp-2_1", "gcall_rsp-2_2"]  # pyright: ignore[reportAttributeAccessIssue]
    assert [call.signature is not None for call in calls] == [True, False, False]  # pyright: ignore[reportAttributeAccessIssue]
    assert response.finish_reason == "tool_calls"
    non_streaming = gemini.decode_response(gemini.encode_response(response))
    assert non_streaming.message.parts == calls


def test_encoder_puts_a_streamed_texts_signature_on_a_trailing_empty_part() -> None:
    signed = TextPart(text="Hello world", signature=SIGNATURE)
    updates: list[Update] = [
        ResponseStarted(id="r", model="m"),
        PartStarted(index=0, part=TextPart(text="Hello")),
        PartDelta(index=0, delta=" world"),
        PartFinished(index=0, part=signed),
        ResponseFinished(finish_reason="stop"),
    ]
    chunks = encode_updates(updates)
    parts = [chunk["candidates"][0].get("content", {}).get("parts") for chunk in chunks]  # pyright: ignore[reportIndexIssue, reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    assert parts == [
        [{"text": "Hello"}],
        [{"text": " world"}],
        [{"text": "", "thoughtSignature": signed.signature.data}],  # pyright: ignore[reportOptionalMemberAccess]
        None,
    ]
    assert chunks[-1]["candidates"] == [{"finishReason": "STOP", "index": 0}]


def test_encoder_sends_a_complete_signed_part_whole() -> None:
    response = Response(
        message=Message(role="assistant", parts=(TextPart(text="Hi", signature=SIGNATURE),)),
        finish_reason="stop",
    )
    chunks = encode_updates(response_to_updates(response))
    assert chunks[0]["candidates"][0]["content"]["parts"] == [  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
        {"text": "Hi", "thoughtSignature": "c2lnbmF0dXJl"}
    ]
    assert fold_updates(decode_trace(chunks)).message.parts == response.message.parts


def test_error_chunk_becomes_stream_failed() -> None:
    decoder = gemini.StreamDecoder()
    body = gemini.encode_error(503, "The model is overloaded.")
    (failed,) = decoder.feed(SseEvent(data=json.dumps(body)))
    assert failed == StreamFailed(
        code="UNAVAILABLE", message="The model is overloaded.", status=503
    )
    assert decoder.finish() == []


def test_stream_cut_before_finish_reason_is_reported() -> None:
    decoder = gemini.StreamDecoder()
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}
    decoder.feed(SseEvent(data=json.dumps(chunk)))
    updates = decoder.finish()
    assert isinstance(updates[0], PartFinished) and updates[0].part == TextPart(text="Hel")
    assert isinstance(updates[-1], StreamFailed) and updates[-1].code == "incomplete_stream"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("{not json", "data"),
        ("[1]", "data"),
        (
            '{"candidates": [{"content": {"parts": [{"text": 1}]}}]}',
            "candidates[0].content.parts[0].text",
        ),
        ('{"candidates": [{"finishReason": []}]}', "candidates[0].finishReason"),
    ],
)
def test_malformed_stream_chunk_raises_decode_error(data: str, path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        gemini.StreamDecoder().feed(SseEvent(data=data))
    assert caught.value.path == path


def test_data_after_finish_reason_is_refused() -> None:
    decoder = gemini.StreamDecoder()
    decoder.feed(SseEvent(data='{"candidates": [{"finishReason": "STOP"}]}'))
    with pytest.raises(DecodeError):
        decoder.feed(SseEvent(data='{"candidates": []}'))


def test_a_folded_response_re_streams_with_its_candidate_fields() -> None:
    """``finishMessage`` and the absence of ``index`` survive fold → re-stream → fold: the
    candidate's own fields ride on the response (its start) once folded."""
    chunks: list[JsonObject] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]},
        {
            "candidates": [
                {"finishReason": "STOP", "finishMessage": "Model generated function call(s)."}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
        },
    ]
    folded = fold_updates(decode_trace(chunks))
    encoder = gemini.StreamEncoder()
    events = [event for update in response_to_updates(folded) for event in encoder.encode(update)]
    final = json.loads(events[-1].data)["candidates"][0]
    assert final == {"finishReason": "STOP", "finishMessage": "Model generated function call(s)."}
    decoder = gemini.StreamDecoder()
    again = fold_updates([update for event in events for update in decoder.feed(event)])
    assert again == folded

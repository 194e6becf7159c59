"""Chat chunk streams → updates: golden traces, tool-call merging, usage, [DONE], errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk

from interlock.codecs.openai_chat import ReasoningDialect, StreamDecoder, decode_response
from interlock.transcript import (
    DecodeError,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ResponseFinished,
    StreamFailed,
    TextPart,
    ToolCallPart,
    Update,
    UsageUpdate,
    fold_updates,
)
from tests.codecs.openai_chat.fixtures_helpers import DIALECT_FIXTURES, events, load, trace


def decode_all(lines: list[str]) -> list[Update]:
    decoder = StreamDecoder()
    updates: list[Update] = []
    for event in events(lines):
        updates.extend(decoder.feed(event))
    return updates + decoder.finish()


def _content(parts: tuple[Any, ...]) -> list[Any]:
    """Parts as a stream carries them: no empty text, no message-only wire fields."""
    kept = [
        p for p in parts if not (isinstance(p, TextPart) and not p.text and p.signature is None)
    ]
    return [
        (
            p.kind,
            getattr(p, "text", None),
            getattr(p, "arguments", None),
            getattr(p, "signature", None),
            getattr(p, "opaque", None),
        )
        for p in kept
    ]


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_golden_trace_folds_to_the_non_streaming_response(
    name: str, dialect: ReasoningDialect
) -> None:
    lines = trace(f"stream_{name}.jsonl")
    for line in lines[:-1]:
        ChatCompletionChunk.model_validate_json(line)  # the traces are SDK-shaped
    folded = fold_updates(decode_all(lines))
    expected = decode_response(load(f"response_{name}.json"))
    assert _content(folded.message.parts) == _content(expected.message.parts)
    assert folded.usage is not None and expected.usage is not None
    assert (folded.usage.output_tokens, folded.usage.reasoning_tokens) == (
        expected.usage.output_tokens,
        expected.usage.reasoning_tokens,
    )
    assert (folded.finish_reason, folded.id, folded.model) == (
        expected.finish_reason,
        expected.id,
        expected.model,
    )


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choices = (
        []
        if delta is None and finish is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    )
    return json.dumps(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 5,
            "model": "m",
            "choices": choices,
            **extra,
        }
    )


def _call(index: int, arguments: str, **first: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if first:
        call["id"] = first["id"]
        call["type"] = "function"
        call["function"]["name"] = first["name"]
    return {"tool_calls": [call]}


def test_trap22_interleaved_parallel_calls_merge_by_index() -> None:
    lines = [
        _chunk(
            {"role": "assistant", "content": None, **_call(0, "", id="call_A", name="get_weather")}
        ),
        _chunk(_call(1, "", id="call_B", name="get_weather")),
        _chunk(_call(0, '{"city":')),
        _chunk(_call(1, '{"city":"Rome"}')),
        _chunk(_call(0, '"Paris"}')),
        _chunk(None, "tool_calls"),
        "[DONE]",
    ]
    response = fold_updates(decode_all(lines))
    calls = response.message.tool_calls
    assert [(c.call_id, c.arguments) for c in calls] == [
        ("call_A", '{"city":"Paris"}'),
        ("call_B", '{"city":"Rome"}'),
    ]
    assert response.finish_reason == "tool_calls"


def test_usage_only_chunk_and_vendor_fields_on_delta() -> None:
    lines = [
        _chunk(
            {"role": "assistant", "content": "", "reasoning_content": "think"},
            system_fingerprint="fp",
            obfuscation="xx",
        ),
        _chunk({"reasoning_content": " more", "content": None}),
        _chunk({"content": "Hi", "extra_content": {"google": {"thought_signature": "SIG"}}}),
        _chunk({}, "stop"),
        _chunk(
            None,
            usage={
                "prompt_tokens": 3,
                "completion_tokens": 9,
                "total_tokens": 12,
                "completion_tokens_details": {"reasoning_tokens": 4},
            },
        ),
        "[DONE]",
    ]
    updates = decode_all(lines)
    response = fold_updates(updates)
    reasoning, text = response.message.parts
    assert isinstance(reasoning, ReasoningPart) and reasoning.text == "think more"
    assert isinstance(text, TextPart) and text.text == "Hi" and text.signature is not None
    assert response.usage is not None and response.usage.reasoning_tokens == 4
    # usage after finish_reason still reaches the encoder before the response's end
    assert isinstance(updates[-2], UsageUpdate) and isinstance(updates[-1], ResponseFinished)
    assert response.extra == {
        "openai-chat": {"system_fingerprint": "fp"}
    }  # obfuscation dropped (trap 37)


def test_openrouter_detail_fragments_merge_by_detail_index() -> None:
    lines = [
        _chunk(
            {
                "reasoning": "Plan",
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "Plan",
                        "index": 0,
                        "format": "anthropic-claude-v1",
                    }
                ],
            }
        ),
        _chunk(
            {
                "reasoning": "ning",
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "ning",
                        "index": 0,
                        "format": "anthropic-claude-v1",
                    }
                ],
            }
        ),
        _chunk(
            {
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "signature": "sig==",
                        "index": 0,
                        "format": "anthropic-claude-v1",
                    }
                ]
            }
        ),
        _chunk({"content": "ok"}, "stop"),
        "[DONE]",
    ]
    updates = decode_all(lines)
    assert [type(u).__name__ for u in updates[:3]] == [
        "ResponseStarted",
        "PartStarted",
        "PartDelta",
    ]
    part = fold_updates(updates).message.parts[0]
    assert isinstance(part, ReasoningPart) and part.text == "Planning"
    assert part.opaque is not None and part.opaque.data == {
        "type": "reasoning.text",
        "text": "Planning",
        "index": 0,
        "format": "anthropic-claude-v1",
        "signature": "sig==",
    }


def test_signature_only_delta_lands_on_an_empty_text_part() -> None:
    lines = [
        _chunk({"extra_content": {"google": {"thought_signature": "S"}}}),
        _chunk({}, "stop"),
        "[DONE]",
    ]
    (part,) = fold_updates(decode_all(lines)).message.parts
    assert isinstance(part, TextPart) and part.text == "" and part.signature is not None


def test_a_cut_stream_is_reported_not_swallowed() -> None:
    updates = decode_all([_chunk({"content": "Hel"})])
    assert isinstance(updates[-1], StreamFailed) and updates[-1].code == "incomplete_stream"
    assert isinstance(StreamDecoder().finish()[0], StreamFailed)


def test_error_event_mid_stream() -> None:
    updates = decode_all(
        [
            _chunk({"content": "a"}),
            json.dumps(
                {
                    "error": {
                        "message": "overloaded",
                        "type": "server_error",
                        "code": "server_overloaded",
                    }
                }
            ),
        ]
    )
    failed = [u for u in updates if isinstance(u, StreamFailed)]
    assert (failed[0].code, failed[0].message) == ("server_overloaded", "overloaded")
    assert len(failed) == 1  # the end of input does not report the same failure again


def test_the_done_after_an_in_band_error_adds_nothing() -> None:
    """OpenRouter sends ``[DONE]`` after its in-band error chunk: the failure is the last
    update (no finished part, no ``ResponseFinished`` after it)."""
    error = json.dumps({"error": {"message": "overloaded", "code": 502}})
    updates = decode_all([_chunk({"content": "a"}), error, "[DONE]"])
    assert isinstance(updates[-1], StreamFailed)
    assert not any(isinstance(u, ResponseFinished | PartFinished) for u in updates)


def test_openrouter_usage_chunk_repeats_the_finished_choice_with_an_empty_delta() -> None:
    """OpenRouter's last chunk (recorded in the corpus): the choice again, an empty delta,
    the same finish_reason, and the usage; the usage reaches the fold before the end."""
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "cost": 0.1}
    updates = decode_all(
        [
            _chunk({"content": "hi"}),
            _chunk({"role": "assistant", "content": ""}, "stop"),
            _chunk({"role": "assistant", "content": ""}, "stop", usage=usage),
            "[DONE]",
        ]
    )
    assert isinstance(updates[-1], ResponseFinished)
    assert [type(u).__name__ for u in updates].count("ResponseFinished") == 1
    response = fold_updates(updates)
    assert response.message.text == "hi" and response.finish_reason == "stop"
    assert response.usage is not None and response.usage.output_tokens == 2


def test_content_after_the_finish_is_still_refused() -> None:
    with pytest.raises(DecodeError, match="after its finish_reason"):
        decode_all([_chunk({"content": "a"}, "stop"), _chunk({"content": "late"})])


def test_done_without_finish_reason_still_finishes_parts() -> None:
    updates = decode_all([_chunk({"content": "a"}), "[DONE]"])
    response = fold_updates(updates)
    assert response.message.text == "a" and response.finish_reason is None


@pytest.mark.parametrize(
    ("lines", "path"),
    [
        (["{not json"], "stream[0]"),
        (["[1, 2]"], "stream[0]"),
        (
            [
                _chunk(_call(0, "", id="a", name="f")),
                _chunk(_call(0, "{oops")),
                _chunk({}, "tool_calls"),
            ],
            "stream[0].choices[0].delta.tool_calls[0].function.arguments",
        ),
        ([_chunk(_call(0, ""))], "stream[0].choices[0].delta.tool_calls[0].id"),
        ([_chunk({"content": 5})], "stream[0].choices[0].delta.content"),
        (
            [json.dumps({"id": "c", "choices": [{"index": -1, "delta": {}}]})],
            "stream[0].choices[0].index",
        ),
        (
            [json.dumps({"id": "c", "choices": [{"index": "1", "delta": {}}]})],
            "stream[0].choices[0].index",
        ),
        ([_chunk({"content": "a"}), "[DONE]", _chunk({"content": "b"})], "stream"),
    ],
)
def test_malformed_streams_raise_decode_errors_naming_the_path(lines: list[str], path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_all(lines)
    assert caught.value.path == path


def test_other_choices_are_skipped_choice_zero_is_the_response() -> None:
    def both(first: dict[str, object], second: dict[str, object], finish: str | None) -> str:
        choices = [
            {"index": 0, "delta": first, "finish_reason": finish},
            {"index": 1, "delta": second, "finish_reason": finish},
        ]
        return json.dumps({"id": "c", "choices": choices})

    updates = decode_all(
        [
            both({"content": "zero"}, {"content": "one"}, None),
            json.dumps({"id": "c", "choices": [{"index": 1, "delta": {"content": " more"}}]}),
            both({}, {}, "stop"),
            json.dumps(
                {"id": "c", "choices": [{"index": 1, "delta": {}, "finish_reason": "stop"}]}
            ),
            "[DONE]",
        ]
    )
    response = fold_updates(updates)
    assert response.message.text == "zero" and response.finish_reason == "stop"


def test_role_chunk_opens_no_part() -> None:
    updates = decode_all(
        [_chunk({"role": "assistant", "content": ""}), _chunk({}, "stop"), "[DONE]"]
    )
    assert not [u for u in updates if isinstance(u, PartStarted | PartDelta)]
    assert fold_updates(updates).message.parts == ()


def test_feed_takes_sse_events_from_the_shared_parser() -> None:
    from interlock.codecs._sse import SseParser

    raw = "".join(f"data: {line}\n\n" for line in trace("stream_none.jsonl"))
    decoder = StreamDecoder()
    updates: list[Update] = []
    for event in SseParser().feed(raw.encode()):
        updates.extend(decoder.feed(event))
    calls = fold_updates(updates).message.tool_calls
    assert [c.call_id for c in calls] == ["call_A", "call_B"]
    assert isinstance(calls[0], ToolCallPart)


def test_raw_reasoning_finishes_before_the_answer_starts() -> None:
    """A ``reasoning_content`` part ends when content starts, not at the response's end, so an
    AG-UI client sees REASONING_MESSAGE_END before the reasoning span closes; the folded
    response is the same as the non-streamed one."""
    lines = [
        _chunk({"role": "assistant", "reasoning_content": "think"}),
        _chunk({"reasoning_content": " more"}),
        _chunk({"content": "Hi"}),
        _chunk({"content": " there"}),
        _chunk({}, "stop"),
        "[DONE]",
    ]
    updates = decode_all(lines)
    order = [(type(u).__name__, getattr(u, "index", None)) for u in updates]
    assert order.index(("PartFinished", 0)) < order.index(("PartStarted", 1))
    assert order.count(("PartFinished", 0)) == 1
    reasoning, text = fold_updates(updates).message.parts
    assert isinstance(reasoning, ReasoningPart) and reasoning.text == "think more"
    assert isinstance(text, TextPart) and text.text == "Hi there"


def test_reasoning_that_resumes_after_the_answer_is_a_new_part() -> None:
    lines = [
        _chunk({"role": "assistant", "reasoning_content": "first"}),
        _chunk({"content": "Hi"}),
        _chunk({"reasoning_content": "second"}),
        _chunk({}, "stop"),
        "[DONE]",
    ]
    parts = fold_updates(decode_all(lines)).message.parts
    assert [(p.kind, getattr(p, "text", None)) for p in parts] == [
        ("reasoning", "first"),
        ("text", "Hi"),
        ("reasoning", "second"),
    ]


GEMINI_VIA_ROUTER = [
    {"type": "reasoning.text", "text": "Look", "index": 0, "format": "google-gemini-v1"},
    {"type": "reasoning.text", "text": "ing up", "index": 0, "format": "google-gemini-v1"},
    {"type": "reasoning.encrypted", "data": "CiQB", "index": 0, "format": "google-gemini-v1"},
]


def test_openrouter_details_of_another_type_under_one_index_stay_separate() -> None:
    """Issue 11: OpenRouter re-streams Gemini's thought text and its encrypted signature
    under one ``index``; merged, they would become one corrupted detail (text + data)."""
    lines = [_chunk({"reasoning_details": [detail]}) for detail in GEMINI_VIA_ROUTER]
    lines += [_chunk({"content": "ok"}, "stop"), "[DONE]"]
    folded = fold_updates(decode_all(lines)).message.parts
    details = [part.opaque.data for part in folded if isinstance(part, ReasoningPart)]  # type: ignore[union-attr]
    whole = [
        {"type": "reasoning.text", "text": "Looking up", "index": 0, "format": "google-gemini-v1"},
        GEMINI_VIA_ROUTER[2],
    ]
    assert details == whole
    # The same details, whole, in a non-streamed answer decode to the same parts.
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 5,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok", "reasoning_details": whole},
                "finish_reason": "stop",
            }
        ],
    }
    assert decode_response(body).message.parts == folded


def test_two_details_listed_in_one_delta_under_one_index_stay_separate() -> None:
    first, second = (
        {"type": "reasoning.summary", "summary": "A", "index": 0},
        {"type": "reasoning.summary", "summary": "B", "index": 0},
    )
    lines = [_chunk({"reasoning_details": [first, second]}), _chunk({}, "stop"), "[DONE]"]
    parts = fold_updates(decode_all(lines)).message.parts
    assert [part.opaque.data for part in parts if isinstance(part, ReasoningPart)] == [  # type: ignore[union-attr]
        first,
        second,
    ]


def test_groq_usage_in_x_groq_of_the_last_chunk_is_the_usage() -> None:
    """Groq's stream (recorded in the corpus) sends its usage only in ``x_groq.usage`` of the
    chunk with the finish_reason; it is the stream's usage, before the response's end, and
    the Chat encoder writes it as the standard ``usage`` (Groq's timings kept beside)."""
    from interlock.codecs.openai_chat import StreamEncoder

    groq_usage = {"queue_time": 0.02, "prompt_tokens": 12, "completion_tokens": 26}
    lines = [
        _chunk({"role": "assistant", "content": ""}, x_groq={"id": "req_1"}),
        _chunk({"content": "Hello"}),
        _chunk({}, "stop", x_groq={"id": "req_1", "usage": {**groq_usage, "total_tokens": 38}}),
        "[DONE]",
    ]
    updates = decode_all(lines)
    assert isinstance(updates[-2], UsageUpdate) and isinstance(updates[-1], ResponseFinished)
    response = fold_updates(updates)
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 26)
    encoder = StreamEncoder(include_usage=True)
    events = [event for update in updates for event in encoder.encode(update)]
    chunks = [json.loads(e.data) for e in events + encoder.finish() if e.data != "[DONE]"]
    usage = [chunk["usage"] for chunk in chunks if chunk.get("usage")]
    assert usage == [{**groq_usage, "total_tokens": 38}]
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)


def test_a_groq_chunk_without_usage_in_x_groq_adds_no_usage() -> None:
    updates = decode_all([_chunk({"content": "a"}, "stop", x_groq={"id": "r"}), "[DONE]"])
    assert not any(isinstance(update, UsageUpdate) for update in updates)
    assert fold_updates(updates).usage is None

"""Updates → Chat chunks: exact golden re-encoding, official shape, usage and [DONE]."""

from __future__ import annotations

import json

import pytest
from openai.types.chat import ChatCompletionChunk

from interlock.codecs.openai_chat import ReasoningDialect, StreamEncoder
from interlock.transcript import (
    Message,
    Opaque,
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
    response_to_updates,
)
from tests.codecs.openai_chat.fixtures_helpers import DIALECT_FIXTURES, trace
from tests.codecs.openai_chat.test_stream_decode import decode_all


def encode_all(
    updates: list[Update], dialect: ReasoningDialect | None, *, usage: bool
) -> list[str]:
    encoder = StreamEncoder(reasoning_dialect=dialect, include_usage=usage)
    out = [event for update in updates for event in encoder.encode(update)]
    return [event.data for event in out + encoder.finish()]


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_golden_trace_decode_then_encode_is_exact(name: str, dialect: ReasoningDialect) -> None:
    lines = trace(f"stream_{name}.jsonl")
    assert encode_all(decode_all(lines), dialect, usage=True) == lines
    assert encode_all(decode_all(lines), None, usage=True) == lines


def _response(*parts: object, usage: Usage | None = None) -> Response:
    return Response(
        message=Message(role="assistant", parts=tuple(parts)),  # type: ignore[arg-type]
        id="chatcmpl-1",
        model="m",
        created=7,
        finish_reason="stop",
        usage=usage,
    )


def test_official_shape_finish_usage_and_done() -> None:
    lines = encode_all(
        response_to_updates(
            _response(TextPart(text="Hi"), usage=Usage(input_tokens=2, output_tokens=3))
        ),
        "none",
        usage=True,
    )
    chunks = [ChatCompletionChunk.model_validate_json(line) for line in lines[:-1]]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[1].choices[0].delta.content == "Hi"
    assert (
        chunks[2].choices[0].finish_reason == "stop" and chunks[2].choices[0].delta.content is None
    )
    assert (
        chunks[3].choices == []
        and chunks[3].usage is not None
        and chunks[3].usage.total_tokens == 5
    )
    assert lines[-1] == "[DONE]"
    without = encode_all(
        response_to_updates(_response(TextPart(text="Hi"), usage=Usage())), "none", usage=False
    )
    assert len(without) == 4 and "usage" not in without[-2]


def test_reasoning_per_dialect_in_streams() -> None:
    raw = ReasoningPart(reasoning_kind="raw", text="think")
    summary = ReasoningPart(reasoning_kind="summary", text="sum")
    updates = response_to_updates(_response(raw, summary, TextPart(text="ok")))

    def deltas(d):
        return [
            json.loads(line)["choices"][0]["delta"]
            for line in encode_all(updates, d, usage=False)[1:-2]
        ]

    assert deltas("reasoning_content") == [{"reasoning_content": "think"}, {"content": "ok"}]
    assert deltas("reasoning") == [{"reasoning": "think"}, {"content": "ok"}]
    assert deltas("none") == [{"content": "ok"}]
    assert deltas("openrouter")[1] == {
        "reasoning": "sum",
        "reasoning_details": [{"type": "reasoning.summary", "summary": "sum", "format": "unknown"}],
    }


def test_a_late_signature_and_whole_arguments_are_still_sent() -> None:
    signature = Opaque(provider="google", format="gemini.thought_signature", data="S")
    call = ToolCallPart(call_id="c", name="f", arguments="")
    done = ToolCallPart(call_id="c", name="f", arguments='{"a":1}', signature=signature)
    updates: list[Update] = [
        ResponseStarted(id="x"),
        PartStarted(index=0, part=call),
        PartFinished(index=0, part=done),
        ResponseFinished(finish_reason="tool_calls"),
    ]
    lines = encode_all(updates, "gemini-compat", usage=False)
    folded = decode_all(lines)
    from interlock.transcript import fold_updates

    assert fold_updates(folded).message.parts == (done,)


def test_stream_failure_is_an_openai_error_event() -> None:
    lines = encode_all(
        [ResponseStarted(), StreamFailed(code="upstream_timeout", message="timed out")],
        "none",
        usage=False,
    )
    assert json.loads(lines[1]) == {
        "error": {
            "message": "timed out",
            "type": "server_error",
            "param": None,
            "code": "upstream_timeout",
        }
    }


def test_usage_arriving_after_finish_is_still_sent() -> None:
    updates: list[Update] = [
        ResponseStarted(),
        ResponseFinished(finish_reason="stop"),
        UsageUpdate(usage=Usage(input_tokens=1)),
    ]
    lines = encode_all(updates, None, usage=True)
    assert json.loads(lines[-2])["usage"]["prompt_tokens"] == 1

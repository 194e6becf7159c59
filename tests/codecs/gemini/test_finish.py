"""finishReason: native values survive (traps 24, 32)."""

from __future__ import annotations

import pytest

from interlock.codecs import gemini
from interlock.codecs.gemini._finish import NATIVE_REASONS, decode_finish, encode_finish
from interlock.transcript import Message, Response, ResponseFinished, TextPart


@pytest.mark.parametrize(
    ("native", "has_calls", "canonical"),
    [
        ("STOP", False, "stop"),
        ("STOP", True, "tool_calls"),
        ("MAX_TOKENS", False, "length"),
        ("SAFETY", False, "content_filter"),
        ("RECITATION", False, "content_filter"),
        ("MALFORMED_FUNCTION_CALL", True, "error"),
        ("UNEXPECTED_TOOL_CALL", True, "error"),
        ("MISSING_THOUGHT_SIGNATURE", False, "error"),
        ("LANGUAGE", False, "other"),
        ("SOMETHING_NEW", False, "other"),
    ],
)
def test_decode_finish(native: str, has_calls: bool, canonical: str) -> None:
    assert decode_finish(native, has_calls) == canonical


def test_every_native_reason_is_kept_on_encode() -> None:
    for native in NATIVE_REASONS:
        assert encode_finish(decode_finish(native, False), native) == native


def test_foreign_native_values_are_mapped_not_copied() -> None:
    assert encode_finish("length", "max_output_tokens") == "MAX_TOKENS"
    assert encode_finish("tool_calls", "tool_calls") == "STOP"
    assert encode_finish("content_filter", None) == "SAFETY"
    assert encode_finish(None, None) is None


def test_a_finished_answer_from_another_dialect_without_a_finish_is_a_stop() -> None:
    """A Chat stream ending on ``[DONE]`` alone finished; without ``finishReason`` a Gemini
    client would take it for one cut short. A Gemini answer that had none keeps none."""
    assert encode_finish(None, None, foreign=True) == "STOP"
    assert encode_finish(None, None) is None
    assert encode_finish("length", None, foreign=True) == "MAX_TOKENS"


def test_whole_and_streamed_answers_from_another_dialect_carry_a_finish() -> None:
    response = Response(message=Message(role="assistant", parts=(TextPart(text="hi"),)))
    whole = gemini.encode_response(response)
    assert whole["candidates"][0]["finishReason"] == "STOP"  # type: ignore[index, call-overload]  # wire JSON
    encoder = gemini.StreamEncoder()
    events = [*encoder.encode(ResponseFinished()), *encoder.finish()]
    assert any('"finishReason":"STOP"' in event.data.replace(" ", "") for event in events)

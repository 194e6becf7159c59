"""finish_reason both ways (trap 32: native values are kept)."""

from __future__ import annotations

import pytest

from interlock.codecs.openai_chat._finish import decode_finish_reason, encode_finish_reason


@pytest.mark.parametrize(
    ("native", "canonical"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        ("content_filter", "content_filter"),
        ("eos", "stop"),  # Together's end of sequence (recorded in the corpus)
        ("vendor_reason", "other"),
    ],
)
def test_decode_and_back(native: str, canonical: str) -> None:
    assert decode_finish_reason(native) == canonical
    assert encode_finish_reason(decode_finish_reason(native), native) == native


@pytest.mark.parametrize(
    ("canonical", "native", "wire"),
    [
        ("content_filter", "SAFETY", "content_filter"),
        ("tool_calls", "STOP", "tool_calls"),
        ("other", "OTHER", "stop"),
        ("refusal", None, "stop"),
        (None, None, "stop"),
        ("length", "max_output_tokens", "length"),
    ],
)
def test_other_dialects_native_values_are_mapped(
    canonical: str | None, native: str | None, wire: str
) -> None:
    assert encode_finish_reason(canonical, native) == wire  # type: ignore[arg-type]

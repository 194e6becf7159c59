"""Single-part decoding: every Part kind, signatures on the exact part, unknown fields kept."""

from __future__ import annotations

import pytest

from interlock.codecs import gemini
from interlock.codecs.gemini._parts import decode_part
from interlock.transcript import (
    HostedToolPart,
    JsonObject,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
)


def round_trip(part: JsonObject) -> JsonObject:
    payload: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [part]},
            {"role": "user", "parts": [{"text": "next"}]},
        ]
    }
    encoded = gemini.encode_request(gemini.decode_request(payload)).payload
    return encoded["contents"][1]["parts"][0]  # pyright: ignore[reportIndexIssue, reportOptionalSubscript, reportArgumentType, reportCallIssue, reportReturnType]


def test_signatures_are_kept_exactly_as_received() -> None:
    """Trap 9: the URL-safe and the standard spelling of the same bytes stay as they came."""
    for spelling in ("-vv8_f7_", "+vv8/f7/"):
        part = decode_part({"text": "a", "thoughtSignature": spelling}, "p", "id")
        assert isinstance(part, TextPart) and part.signature is not None
        assert part.signature.data == spelling
        assert round_trip({"text": "a", "thoughtSignature": spelling}) == {
            "text": "a",
            "thoughtSignature": spelling,
        }


def test_each_signed_text_part_keeps_its_own_signature() -> None:
    """Trap 8: several signed text parts each keep their own signature, never just the first."""
    payload: JsonObject = {
        "contents": [
            {
                "role": "model",
                "parts": [
                    {"text": "a", "thoughtSignature": "c2lnMQ=="},
                    {"text": "b", "thoughtSignature": "c2lnMg=="},
                ],
            }
        ]
    }
    (message,) = gemini.decode_request(payload).messages
    assert [part.signature.data for part in message.parts] == ["c2lnMQ==", "c2lnMg=="]  # pyright: ignore[reportAttributeAccessIssue, reportOptionalMemberAccess]
    assert gemini.encode_request(gemini.decode_request(payload)).payload == payload


def test_call_ids_never_carry_signatures() -> None:
    """Trap 11: the signature stays a sibling of functionCall, never smuggled into the id."""
    part = decode_part(
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}, "p", "gcall_1_0"
    )
    assert isinstance(part, ToolCallPart)
    assert part.call_id == "gcall_1_0" and "c2ln" not in part.call_id
    assert round_trip({"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}) == {
        "functionCall": {"name": "f", "args": {}},
        "thoughtSignature": "c2ln",
    }


@pytest.mark.parametrize(
    ("wire", "kind"),
    [
        ({"text": "plain"}, "text"),
        ({"text": "thinking", "thought": True}, "summary"),
        ({"text": "thinking", "thought": True, "thoughtSignature": "c2ln"}, "summary"),
        ({"text": "", "thoughtSignature": "c2ln"}, "encrypted"),
        ({"thoughtSignature": "c2ln"}, "encrypted"),
        ({"text": "", "thought": True, "thoughtSignature": "c2ln"}, "summary"),
        ({"text": "x", "thought": False}, "text"),
        (
            {
                "inlineData": {"mimeType": "image/png", "data": "AAAA"},
                "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"},
            },
            "media",
        ),
        (
            {"executableCode": {"language": "PYTHON", "code": "1"}, "thoughtSignature": "c2ln"},
            "hosted_tool",
        ),
        ({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}}, "hosted_tool"),
        ({"toolCall": {"id": "t1"}}, "hosted_tool"),
        ({"functionCall": {"name": "f", "args": {}, "thoughtSignature": "bmVzdGVk"}}, "tool_call"),
        ({"functionCall": {"id": "x", "name": "f"}, "futureField": {"a": 1}}, "tool_call"),
    ],
)
def test_part_kinds_decode_and_round_trip(wire: JsonObject, kind: str) -> None:
    part = decode_part(wire, "p", "gcall_0")
    found = part.reasoning_kind if isinstance(part, ReasoningPart) else part.kind
    assert found == kind
    assert round_trip(wire) == wire


def test_legacy_nested_signature_is_read_and_put_back_where_it_was() -> None:
    """provider-wire.md §3.4 rule 5: 2.x nested the signature inside functionCall."""
    part = decode_part(
        {"functionCall": {"name": "f", "args": {}, "thoughtSignature": "bmVzdGVk"}}, "p", "id"
    )
    assert isinstance(part, ToolCallPart) and part.signature is not None
    assert part.signature.data == "bmVzdGVk"


def test_hosted_parts_keep_the_wire_part_verbatim() -> None:
    wire: JsonObject = {"executableCode": {"language": "PYTHON", "code": "1"}}
    part = decode_part(wire, "p", "id")
    assert part == HostedToolPart(provider="google", item_type="executableCode", item=wire)


def test_media_data_is_kept_as_received() -> None:
    part = decode_part({"inlineData": {"mimeType": "image/png", "data": "iVBO-_w"}}, "p", "id")
    assert isinstance(part, MediaPart) and part.data == "iVBO-_w"

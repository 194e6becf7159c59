"""Response mapping: golden round trips, finish reasons, usage."""

from __future__ import annotations

import json

import pytest
from openai.types.responses import Response as SdkResponse
from pydantic import TypeAdapter

from interlock.codecs.openai_responses import (
    DIALECT,
    StreamEncoder,
    decode_response,
    encode_response,
)
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    ApprovalRequestPart,
    Citation,
    DecodeError,
    Message,
    Opaque,
    ReasoningPart,
    Response,
    TextPart,
    ToolCallPart,
    Usage,
    response_to_updates,
)
from tests.codecs.openai_responses._fixtures import load, names


@pytest.mark.parametrize("name", names("response_"))
def test_golden_response_round_trips_exactly(name: str) -> None:
    payload = load(name)
    assert encode_response(decode_response(payload)) == payload


def test_reasoning_call_response_decodes_finish_and_usage() -> None:
    response = decode_response(load("response_reasoning_call.json"))
    assert response.finish_reason == "tool_calls" and response.native_finish_reason == "completed"
    assert response.usage == Usage(input_tokens=36, output_tokens=87, reasoning_tokens=64)
    assert response.usage.total_tokens == 123  # output already includes reasoning (trap 31)
    kinds = [type(part) for part in response.message.parts]
    assert kinds == [ReasoningPart, ReasoningPart, ToolCallPart]


def test_incomplete_response_keeps_native_reason_annotations_and_input_transformations() -> None:
    """Trap 32 (native reason kept) and trap 16 (withheld reasoning surfaced, not swallowed)."""
    response = decode_response(load("response_message_incomplete.json"))
    assert (response.finish_reason, response.native_finish_reason) == (
        "length",
        "max_output_tokens",
    )
    assert response.extra[DIALECT]["input_transformations"][0]["reason"] == "model_mismatch"  # type: ignore[index]
    text = response.message.parts[1]
    assert isinstance(text, TextPart)
    assert text.citations == (Citation(url="https://x", title="X", start=0, end=5),), (
        "a url_citation annotation is a canonical citation (issue 11)"
    )
    assert encode_response(response) == load("response_message_incomplete.json")


def test_hosted_approval_request_output() -> None:
    response = decode_response(load("response_mcp_approval.json"))
    request = response.message.parts[1]
    assert isinstance(request, ApprovalRequestPart) and request.call.owner == "hosted"
    assert response.usage is None and response.finish_reason == "stop"


@pytest.mark.parametrize(
    ("finish", "native", "status", "details"),
    [
        ("stop", None, "completed", None),
        ("tool_calls", None, "completed", None),
        ("length", None, "incomplete", {"reason": "max_output_tokens"}),
        ("content_filter", "SAFETY", "incomplete", {"reason": "content_filter"}),
        ("error", None, "failed", None),
        ("other", "cancelled", "cancelled", None),
    ],
)
def test_canonical_finish_maps_to_status(
    finish: str, native: str | None, status: str, details: object
) -> None:
    response = Response(
        message=Message(role="assistant", parts=(TextPart(text="x"),)),
        id="resp_1",
        finish_reason=finish,
        native_finish_reason=native,
    )  # type: ignore[arg-type]
    body = encode_response(response)
    assert (body["status"], body["incomplete_details"]) == (status, details)


def test_parts_without_ids_get_deterministic_item_ids_marked_as_minted() -> None:
    """Issue 11: ids the gateway minted are never read back as service item ids."""
    response = Response(
        message=Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="summary", text="t"),
                TextPart(text="a"),
                ToolCallPart(call_id="c", name="f"),
            ),
        ),
        id="resp_xyz",
        finish_reason="tool_calls",
    )
    body = encode_response(response)
    ids = [item["id"] for item in body["output"]]  # type: ignore[index]
    assert ids == ["rs_interlock_xyz_0", "msg_interlock_xyz_1", "fc_interlock_xyz_2"]
    assert encode_response(response) == body
    decoded = decode_response(body).message.parts
    assert [getattr(part, "item_id", None) for part in decoded] == [None, None, None]


def test_a_response_without_time_or_model_still_encodes_to_an_sdk_valid_response() -> None:
    """Another dialect's response (AG-UI, Gemini) often has no ``created``/``model``."""
    response = Response(message=Message(role="assistant", parts=(TextPart(text="hi"),)))
    body = encode_response(response)
    TypeAdapter(SdkResponse).validate_python(body)
    defaults = ("created_at", "model", "parallel_tool_calls", "tool_choice", "tools")
    assert [body[key] for key in defaults] == [0, "", True, "auto", []]


def test_a_wire_without_created_at_or_model_round_trips_without_them() -> None:
    payload = load("response_mcp_approval.json")
    del payload["created_at"], payload["model"]
    response = decode_response(payload)
    assert (response.created, response.model) == (None, None)
    assert encode_response(response) == payload


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"id": "r"}, "output"),
        ({"output": [{"type": "message", "role": "assistant", "content": 3}]}, "output[0].content"),
        ({"output": [], "usage": {"input_tokens": "x"}}, "usage.input_tokens"),
        ({"output": [], "created_at": "now"}, "created_at"),
    ],
)
def test_malformed_responses_raise_decode_error(payload: dict[str, object], path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_response(payload)  # type: ignore[arg-type]
    assert caught.value.path == path


def test_another_providers_hosted_item_never_reaches_output_without_a_type() -> None:
    """Gemini code execution has no Responses output type: it is left out of the response and
    of the stream alike (the history path refuses or warns: hosted_item_not_carried)."""
    from interlock.codecs import gemini
    from interlock.codecs.openai_responses import StreamEncoder, encode_response
    from interlock.transcript import response_to_updates

    response = gemini.decode_response(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
                            {"text": "1"},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ]
        }
    )
    output = encode_response(response)["output"]
    assert [item["type"] for item in output] == ["message"]
    encoder = StreamEncoder()
    events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
    events += encoder.finish()
    assert json.loads(events[-1].data)["response"]["output"] == output


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_holding_only_a_foreign_payload_is_no_output_item(stream: bool) -> None:
    """A Gemini signature-only part (the tail of a streamed Gemini text answer) has nothing a
    Responses client can read or return: no empty reasoning item, whole or streamed."""
    signature = Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="c2ln")
    response = Response(
        message=Message(
            role="assistant",
            parts=(
                TextPart(text="hi"),
                ReasoningPart(reasoning_kind="encrypted", opaque=signature),
            ),
        ),
        id="resp_1",
        finish_reason="stop",
    )
    if not stream:
        output = encode_response(response)["output"]
    else:
        encoder = StreamEncoder()
        events = [e for u in response_to_updates(response) for e in encoder.encode(u)]
        events += encoder.finish()
        assert not any('"reasoning"' in event.data for event in events[:-1])
        output = json.loads(events[-1].data)["response"]["output"]
    assert [item["type"] for item in output] == ["message"]  # type: ignore[index, union-attr]  # wire JSON

"""Request decoding and exact same-dialect round trips."""

from __future__ import annotations

import copy

import pytest

from interlock.codecs.openai_responses import (
    ENCRYPTED_FORMAT,
    decode_request,
    encode_request,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    HostedToolPart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)
from tests.codecs.openai_responses._fixtures import load, names


@pytest.mark.parametrize("name", names("request_"))
def test_golden_request_round_trips_exactly(name: str) -> None:
    payload = load(name)
    original = copy.deepcopy(payload)
    encoded = encode_request(decode_request(payload))
    assert encoded.payload == original
    assert encoded.warnings == ()
    assert payload == original  # decoding never mutates its input


def test_instructions_become_a_marked_leading_system_message() -> None:
    request = decode_request(load("request_stored_kitchen_sink.json"))
    first = request.messages[0]
    assert first.role == "system" and first.text == "You are terse."
    assert request.messages[1].role == "developer"


def test_reasoning_item_is_one_part_per_entry_sharing_the_item_id() -> None:
    request = decode_request(load("request_stored_kitchen_sink.json"))
    parts = [p for m in request.messages for p in m.parts if isinstance(p, ReasoningPart)]
    rs2 = [p for p in parts if p.item_id == "rs_2"]
    assert [(p.reasoning_kind, p.text) for p in rs2] == [
        ("summary", "a"),
        ("summary", "b"),
        ("raw", "raw thought"),
    ]
    stateless = decode_request(load("request_stateless_replay.json"))
    encrypted = [
        p for m in stateless.messages for p in m.parts if isinstance(p, ReasoningPart) and p.opaque
    ]
    assert encrypted[0].opaque is not None
    assert (encrypted[0].opaque.provider, encrypted[0].opaque.format) == (
        "openai",
        ENCRYPTED_FORMAT,
    )
    assert encrypted[0].item_id == "rs_0a1"


def test_empty_reasoning_item_is_kept_as_a_payloadless_encrypted_part() -> None:
    """Trap 3: ``summary: []`` with nothing else still is a reasoning item."""
    request = decode_request(load("request_stored_kitchen_sink.json"))
    rs1 = [p for m in request.messages for p in m.parts if getattr(p, "item_id", None) == "rs_1"]
    assert rs1 == [ReasoningPart(reasoning_kind="encrypted", item_id="rs_1")]


def test_items_map_to_their_canonical_parts() -> None:
    request = decode_request(load("request_stored_kitchen_sink.json"))
    parts = [p for m in request.messages for p in m.parts]
    approval = next(p for p in parts if isinstance(p, ApprovalRequestPart))
    assert approval.call.owner == "hosted" and approval.call.server_label == "deepwiki"
    decision = next(p for p in parts if isinstance(p, ApprovalResponsePart))
    assert (decision.approval_id, decision.approved) == ("mcpr_1", True)
    hosted = {p.item_type for p in parts if isinstance(p, HostedToolPart)}
    assert hosted == {"mcp_list_tools", "mcp_call", "item_reference", "compaction", "program"}
    call = next(p for p in parts if isinstance(p, ToolCallPart))
    assert (call.call_id, call.item_id, call.occurrence_id) == ("call_2", "fc_2", None)
    result = next(p for p in parts if isinstance(p, ToolResultPart))
    assert isinstance(result.output[1], MediaPart) and result.output[1].media_type == "image/jpeg"
    media = [p for m in request.messages for p in m.parts if isinstance(p, MediaPart)]
    assert media[0].data == "iVBORw0KGgo=" and media[1].uri == "https://example.com/cat.png"


def test_options_tools_and_continuation() -> None:
    request = decode_request(load("request_stored_kitchen_sink.json"))
    assert request.options.reasoning_effort == "high" and request.options.temperature == 0.2
    assert [t.name for t in request.tools] == ["lookup"]
    assert [h.spec["type"] for h in request.hosted_tools] == ["mcp", "web_search"]
    assert request.tool_choice == ToolChoice(mode="required", names=("lookup",))
    assert request.options.metadata == {"trace": "t-1"}
    continued = decode_request(load("request_continuation.json"))
    assert continued.continuation.previous_response_id == "resp_prev"
    string_input = decode_request(load("request_string_input.json"))
    assert string_input.continuation.conversation_id == "conv_123"
    assert string_input.messages[0].parts == (TextPart(text="Tell me a joke"),)
    assert string_input.stream is True


def test_every_tool_choice_shape_decodes() -> None:
    def choice(value: object) -> ToolChoice | None:
        return decode_request({"model": "m", "input": [], "tool_choice": value}).tool_choice  # type: ignore[dict-item]

    assert choice("none") == ToolChoice(mode="none")
    assert choice({"type": "function", "name": "f"}) == ToolChoice(mode="required", names=("f",))
    assert choice(
        {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "a"}]}
    ) == ToolChoice(mode="auto", names=("a",))
    assert choice({"type": "mcp", "server_label": "s"}) == ToolChoice(mode="required")
    for value in ({"type": "mcp", "server_label": "s"}, {"type": "custom", "name": "c"}):
        payload = {"model": "m", "input": [], "tool_choice": value}
        assert encode_request(decode_request(payload)).payload == payload  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"model": 3, "input": []}, "model"),
        ({"model": "m", "input": {"x": 1}}, "input"),
        ({"model": "m", "input": [7]}, "input[0]"),
        ({"model": "m", "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        (
            {"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "f"}]},
            "input[0].arguments",
        ),
        (
            {
                "model": "m",
                "input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}],
            },
            "input[0].arguments",
        ),
        (
            {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]},
            "input[0].call_id",
        ),
        ({"model": "m", "input": [{"type": "reasoning", "id": "rs"}]}, "input[0].summary"),
        (
            {
                "model": "m",
                "input": [{"type": "reasoning", "summary": [{"type": "x", "text": ""}]}],
            },
            "input[0].summary[0].type",
        ),
        (
            {"model": "m", "input": [{"type": "reasoning", "summary": [], "encrypted_content": 5}]},
            "input[0].encrypted_content",
        ),
        (
            {
                "model": "m",
                "input": [{"type": "mcp_approval_response", "approval_request_id": "r"}],
            },
            "input[0].approve",
        ),
        (
            {"model": "m", "input": [{"role": "assistant", "content": [{"type": "input_image"}]}]},
            "input[0].content[0].type",
        ),
        ({"model": "m", "input": [], "tools": [{"type": "function"}]}, "tools[0].name"),
        ({"model": "m", "input": [], "tool_choice": "sometimes"}, "tool_choice"),
        ({"model": "m", "input": [], "temperature": "hot"}, "temperature"),
        ({"model": "m", "input": [], "reasoning": []}, "reasoning"),
    ],
)
def test_malformed_requests_raise_decode_error_naming_the_path(
    payload: dict[str, object], path: str
) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_request(payload)  # type: ignore[arg-type]
    assert caught.value.path == path

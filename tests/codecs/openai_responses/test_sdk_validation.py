"""Encoded requests validated item by item against the SDK's TypedDicts, unknown keys forbidden.

Recipe of provider-wire §5.3: dispatch on ``type`` ourselves (the SDK's input union is not
discriminated) and validate each item against its single TypedDict wrapped in a list with
``extra="forbid"``.
"""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses.easy_input_message_param import EasyInputMessageParam
from openai.types.responses.response_function_tool_call_param import ResponseFunctionToolCallParam
from openai.types.responses.response_input_item_param import (
    FunctionCallOutput,
    ItemReference,
    McpApprovalRequest,
    McpApprovalResponse,
    McpCall,
    McpListTools,
    Message,
)
from openai.types.responses.response_output_message_param import ResponseOutputMessageParam
from openai.types.responses.response_reasoning_item_param import ResponseReasoningItemParam
from pydantic import ConfigDict, TypeAdapter, ValidationError

from interlock.codecs.openai_responses import decode_request, encode_request
from tests.codecs.openai_responses._fixtures import load

FORBID = ConfigDict(extra="forbid")
BY_TYPE: dict[str, Any] = {
    "reasoning": ResponseReasoningItemParam,
    "function_call": ResponseFunctionToolCallParam,
    "function_call_output": FunctionCallOutput,
    "mcp_list_tools": McpListTools,
    "mcp_approval_request": McpApprovalRequest,
    "mcp_approval_response": McpApprovalResponse,
    "mcp_call": McpCall,
    "item_reference": ItemReference,
}


def item_type(item: dict[str, Any]) -> Any:
    kind = item.get("type", "message")
    if kind != "message":
        return BY_TYPE[kind]
    if item["role"] == "assistant":
        return ResponseOutputMessageParam if "id" in item else EasyInputMessageParam
    return (
        EasyInputMessageParam if isinstance(item["content"], str) or "id" not in item else Message
    )


def validate(item: dict[str, Any]) -> None:
    TypeAdapter(list[item_type(item)], config=FORBID).validate_python([item])


@pytest.mark.parametrize(
    "name",
    ["request_stateless_replay.json", "request_continuation.json", "request_string_input.json"],
)
def test_encoded_items_validate_against_sdk_types(name: str) -> None:
    payload = encode_request(decode_request(load(name))).payload
    items = payload["input"]
    for item in items if isinstance(items, list) else []:
        validate(item)  # type: ignore[arg-type]


def test_kitchen_sink_items_of_known_types_validate() -> None:
    payload = encode_request(decode_request(load("request_stored_kitchen_sink.json"))).payload
    checked = 0
    for item in payload["input"]:  # type: ignore[union-attr]
        if item.get("type") in ("compaction", "program"):  # type: ignore[union-attr]
            continue  # pass-through items newer than these TypedDicts' dispatch table
        if (
            item.get("role") == "assistant"
            and "id" not in item
            and isinstance(item.get("content"), list)
        ):  # type: ignore[union-attr]
            continue  # trap 35: the SDK rejects id-less output parts the service accepts (kept as the client sent it)
        validate(item)  # type: ignore[arg-type]
        checked += 1
    assert checked == 14


def test_the_validator_can_fail() -> None:
    with pytest.raises(ValidationError):
        validate(
            {"type": "reasoning", "id": "rs_1", "summary": [], "reasoning_content": "deepseek-ism"}
        )

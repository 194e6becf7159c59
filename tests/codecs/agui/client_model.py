"""A small Python model of how ``@ag-ui/client`` 1.0 materializes messages from events.

It mirrors ``defaultApplyEvents`` (reference §4.5) closely enough to check round trips:
what a frontend would hold after a run, and send back in the next ``RunAgentInput``.
Event ``metadata`` merges like the client's ``mergeMetadata`` (shallow, last write wins per
key): text/reasoning message events into the message, tool-call events into the call,
``TOOL_CALL_RESULT`` into the tool message.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

Message = dict[str, Any]


def _find(messages: list[Message], message_id: object) -> Message | None:
    return next((message for message in messages if message.get("id") == message_id), None)


def _find_call(messages: list[Message], call_id: object) -> dict[str, Any] | None:
    for message in messages:
        for call in message.get("toolCalls", []):
            if call["id"] == call_id:
                return call
    return None


_MESSAGE_EVENTS = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
    }
)
_CALL_EVENTS = frozenset({"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"})


def apply_events(messages: list[Message], events: Iterable[dict[str, Any]]) -> list[Message]:
    """The message list after applying ``events`` to ``messages`` (inputs untouched)."""
    out = copy.deepcopy(messages)
    for event in events:
        _apply(out, event)
        _merge_metadata(out, event)
    return out


def _merge_metadata(out: list[Message], event: dict[str, Any]) -> None:
    metadata = event.get("metadata")
    if metadata is None:
        return
    kind = event["type"]
    if kind in _MESSAGE_EVENTS or kind == "TOOL_CALL_RESULT":
        target = _find(out, event["messageId"])
    elif kind in _CALL_EVENTS:
        target = _find_call(out, event["toolCallId"])
    else:
        return
    assert target is not None
    target["metadata"] = {**target.get("metadata", {}), **copy.deepcopy(metadata)}


def _apply(out: list[Message], event: dict[str, Any]) -> None:
    kind = event["type"]
    if kind == "TEXT_MESSAGE_START" and _find(out, event["messageId"]) is None:
        out.append(
            {"id": event["messageId"], "role": event.get("role", "assistant"), "content": ""}
        )
    elif kind in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
        message = _find(out, event["messageId"])
        assert message is not None
        message["content"] = (message.get("content") or "") + event["delta"]
    elif kind == "REASONING_MESSAGE_START":
        out.append({"id": event["messageId"], "role": "reasoning", "content": ""})
    elif kind == "TOOL_CALL_START":
        parent = _find(out, event.get("parentMessageId"))
        if parent is None:
            parent = {
                "id": event.get("parentMessageId") or event["toolCallId"],
                "role": "assistant",
            }
            out.append(parent)
        parent.setdefault("toolCalls", []).append(
            {
                "id": event["toolCallId"],
                "type": "function",
                "function": {"name": event["toolCallName"], "arguments": ""},
            }
        )
    elif kind == "TOOL_CALL_ARGS":
        call = _find_call(out, event["toolCallId"])
        assert call is not None
        call["function"]["arguments"] += event["delta"]
    elif kind == "TOOL_CALL_RESULT":
        out.append(
            {
                "id": event["messageId"],
                "role": "tool",
                "toolCallId": event["toolCallId"],
                "content": event["content"],
            }
        )
    elif kind == "REASONING_ENCRYPTED_VALUE":
        if event["subtype"] == "message":
            target = _find(out, event["entityId"])
        else:
            target = _find_call(out, event["entityId"])
        assert target is not None
        target["encryptedValue"] = event["encryptedValue"]
    elif kind == "MESSAGES_SNAPSHOT":
        out[:] = copy.deepcopy(event["messages"])

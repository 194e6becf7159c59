"""AG-UI 1.0 event shapes as JSON-ready dicts.

Each builder returns one event: ``type`` first, camelCase keys, optional fields omitted
(never ``null``). Timestamps are added by the encoder (only when it was given a clock:
codecs never read one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

from ag_ui.core import PROTOCOL_VERSION

from interlock.codecs.agui._wire import without_none
from interlock.transcript import JsonObject, JsonValue, Usage

EncryptedSubtype: TypeAlias = Literal["message", "tool-call"]

_PATCH_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})
_PATCH_NEEDS_VALUE = frozenset({"add", "replace", "test"})
_PATCH_NEEDS_FROM = frozenset({"move", "copy"})


def event(type_: str, fields: Mapping[str, JsonValue]) -> JsonObject:
    """An event of ``type_`` with ``fields``, dropping the ``None`` ones."""
    return {"type": type_, **without_none(fields)}


def run_started(thread_id: str, run_id: str, parent_run_id: str | None) -> JsonObject:
    """``RUN_STARTED`` stamped with the protocol version this codec speaks."""
    return event(
        "RUN_STARTED",
        {
            "threadId": thread_id,
            "runId": run_id,
            "protocolVersion": PROTOCOL_VERSION,
            "parentRunId": parent_run_id,
        },
    )


def encrypted_value(subtype: EncryptedSubtype, entity_id: str, sealed: str) -> JsonObject:
    """``REASONING_ENCRYPTED_VALUE`` for a message or tool call (``sealed`` is already sealed)."""
    return event(
        "REASONING_ENCRYPTED_VALUE",
        {"subtype": subtype, "entityId": entity_id, "encryptedValue": sealed},
    )


def token_usage(usage: Usage, *, model: str | None, provider: str | None) -> JsonObject:
    """One ``TokenUsage`` entry in the 1.0 accounting (parts never added to totals)."""
    input_tokens = usage.input_tokens + usage.tool_prompt_tokens
    return without_none(
        {
            "provider": provider,
            "model": model,
            "inputTokens": input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": input_tokens + usage.output_tokens,
            "reasoningTokens": usage.reasoning_tokens or None,
            "cachedInputTokens": usage.cached_input_tokens or None,
        }
    )


def add_usage(total: Usage | None, more: Usage) -> Usage:
    """The sum of two usage records (``extra`` is not carried)."""
    if total is None:
        return Usage(
            input_tokens=more.input_tokens,
            output_tokens=more.output_tokens,
            reasoning_tokens=more.reasoning_tokens,
            cached_input_tokens=more.cached_input_tokens,
            tool_prompt_tokens=more.tool_prompt_tokens,
        )
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        reasoning_tokens=total.reasoning_tokens + more.reasoning_tokens,
        cached_input_tokens=total.cached_input_tokens + more.cached_input_tokens,
        tool_prompt_tokens=total.tool_prompt_tokens + more.tool_prompt_tokens,
    )


def check_patch(operations: Sequence[JsonObject]) -> None:
    """Refuse a JSON Patch (RFC 6902) the client's schema stage would reject."""
    for index, operation in enumerate(operations):
        op = operation.get("op")
        if op not in _PATCH_OPS:
            raise ValueError(f"delta[{index}].op: not an RFC 6902 operation: {op!r}")
        if not isinstance(operation.get("path"), str):
            raise ValueError(f"delta[{index}].path: a JSON Pointer string is required")
        if op in _PATCH_NEEDS_VALUE and "value" not in operation:
            raise ValueError(f"delta[{index}].value: required for {op}")
        if op in _PATCH_NEEDS_FROM and not isinstance(operation.get("from"), str):
            raise ValueError(f"delta[{index}].from: required for {op}")

"""Messages API ``Message`` (non-streaming response) ⇄ canonical :class:`Response`.

``stop_reason`` is kept as ``native_finish_reason`` and mapped: ``end_turn`` and
``stop_sequence`` → ``stop``, ``max_tokens`` and ``model_context_window_exceeded`` → ``length``,
``tool_use`` → ``tool_calls``, ``refusal`` (a safety classifier stepped in) → ``content_filter``,
anything else (``pause_turn``, values
added later) → ``other``. ``stop_sequence`` and fields the canonical model does not name
(``stop_details``, ``container``…) stay in ``extra["anthropic"]``.
"""

from __future__ import annotations

from typing import Final

from interlock.codecs.anthropic._blocks import decode_block
from interlock.codecs.anthropic._encode import PartEncoder
from interlock.codecs.anthropic._usage import decode_usage, encode_usage
from interlock.codecs.anthropic._wire import (
    DIALECT,
    PROVIDER,
    as_list,
    as_str,
    object_entry,
    own_extra,
    split,
)
from interlock.transcript import (
    FinishReason,
    JsonObject,
    JsonValue,
    Message,
    ReplayPolicy,
    Response,
    ToolCallPart,
)

_KNOWN: Final = frozenset(
    {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
)
FINISH: Final[dict[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_STOP_REASONS: Final = frozenset({*FINISH, "pause_turn"})
_FROM_FINISH: Final[dict[FinishReason, str]] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
    "refusal": "refusal",
    "error": "end_turn",
    "other": "end_turn",
}


def finish_reason(native: str | None) -> FinishReason | None:
    """The canonical finish reason for a ``stop_reason`` (``None`` while unknown)."""
    if native is None:
        return None
    return FINISH.get(native, "other")


def stop_reason(response: Response) -> str:
    """The ``stop_reason`` to send: Anthropic's own when it has one (open enum), else mapped."""
    native = response.native_finish_reason
    if native is not None and DIALECT in response.extra:
        return native
    if any(isinstance(p, ToolCallPart) and p.owner != "hosted" for p in response.message.parts):
        return "tool_use"
    if native in _STOP_REASONS:
        return native
    return _FROM_FINISH.get(response.finish_reason or "stop", "end_turn")


def decode_response(payload: JsonObject, issuer: str = PROVIDER) -> Response:
    """A wire ``Message`` as a canonical response, its signatures named as issued by vendor
    ``issuer``; raises :class:`DecodeError` naming the path."""
    fields, rest = split(payload, _KNOWN)
    parts = tuple(
        decode_block(item, f"content[{index}]", issuer)
        for index, item in enumerate(as_list(fields.get("content", []), "content"))
    )
    native = fields.get("stop_reason")
    native_text = None if native is None else as_str(native, "stop_reason")
    own: JsonObject = {"stop_sequence": fields.get("stop_sequence")}
    if rest:
        own["fields"] = rest
    message_id = fields.get("id")
    model = fields.get("model")
    return Response(
        message=Message(role="assistant", parts=parts),
        id=None if message_id is None else as_str(message_id, "id"),
        model=None if model is None else as_str(model, "model"),
        finish_reason=finish_reason(native_text),
        native_finish_reason=native_text,
        usage=decode_usage(fields["usage"], "usage") if "usage" in fields else None,
        extra={DIALECT: own},
    )


def encode_response(response: Response) -> JsonObject:
    """The wire ``Message`` for ``response`` (parts Anthropic cannot show are left out)."""
    encoder = PartEncoder(ReplayPolicy(), for_request=False)
    content: list[JsonValue] = []
    for index, part in enumerate(response.message.parts):
        block = encoder.encode(part, f"message.parts[{index}]")
        if block is not None:
            content.append(block)
    own = own_extra(response.extra)
    payload: JsonObject = {
        "id": response.id or "msg_interlock",
        "type": "message",
        "role": "assistant",
        "model": response.model or "",
        "content": content,
        "stop_reason": stop_reason(response),
        "stop_sequence": own.get("stop_sequence"),
        "usage": encode_usage(response.usage),
    }
    payload.update(object_entry(own, "fields"))
    return payload

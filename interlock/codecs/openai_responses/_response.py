"""Response object ↔ canonical :class:`Response`.

Output items become the parts of one assistant message (``_items``). Items without an id
(canonical parts from another dialect) get a deterministic one derived from the response
id and the output index, the same in :func:`encode_response` and the stream encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from interlock.codecs.openai_responses._items import decode_output_items
from interlock.codecs.openai_responses._render import ItemGroup, group_parts, render_group
from interlock.codecs.openai_responses._usage import (
    decode_finish,
    decode_usage,
    encode_finish,
    encode_usage,
)
from interlock.codecs.openai_responses._wire import (
    ENCRYPTED_FORMAT,
    MINTED,
    PROVIDER,
    as_list,
    as_object,
    merge_fields,
    optional_int,
    optional_str,
    own,
    split_fields,
    wrap,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    LossyHistoryError,
    MediaPart,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_KNOWN = {"id", "created_at", "status", "incomplete_details", "model", "output", "usage"}
_DEFAULTS: JsonObject = {
    # Always present on the service's responses (required by the SDK's ``Response`` model);
    # a canonical response from another dialect has none of them, so it gets these.
    "object": "response",
    "error": None,
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


def decode_response(payload: JsonObject, *, issuer: str = PROVIDER) -> Response:
    """Decode a Responses response object; raises :class:`DecodeError` naming the bad path.
    Encrypted reasoning is labelled with ``issuer`` (the vendor that answered)."""
    body = as_object(payload, "")
    if "output" not in body:
        raise DecodeError("output", "required field is missing")
    parts = decode_output_items(as_list(body["output"], "output"), "output", issuer)
    status = optional_str(body, "status", "")
    details = body.get("incomplete_details")
    reason = None
    if details is not None:
        reason = optional_str(
            as_object(details, "incomplete_details"), "reason", "incomplete_details"
        )
    has_calls = any(isinstance(part, ToolCallPart) for part in parts)
    finish, native = decode_finish(status, reason, has_calls)
    fields = response_fields(body)
    usage_value = body.get("usage")
    return Response(
        message=Message(role="assistant", parts=parts),
        id=optional_str(body, "id", ""),
        model=optional_str(body, "model", ""),
        created=optional_int(body, "created_at", ""),
        finish_reason=finish,
        native_finish_reason=native,
        usage=None if usage_value is None else decode_usage(usage_value, "usage"),
        extra=wrap(fields),
    )


def response_fields(body: JsonObject) -> JsonObject:
    """The response-level fields kept verbatim (everything but output, usage, ids, status)."""
    fields = split_fields(body, _KNOWN, _DEFAULTS)
    for key in ("created_at", "model", "incomplete_details", "usage"):
        if key not in body:
            fields[f"~no_{key}"] = True
    return fields


def encode_response(response: Response) -> JsonObject:
    """Encode a canonical response as a Responses response object."""
    return response_object(response, output_items(response.message.parts, response.id))


def response_object(response: Response, output: list[JsonValue]) -> JsonObject:
    """The response envelope around already-rendered ``output`` items.

    Always a valid SDK ``Response`` unless the wire it was decoded from lacked a field
    (``~no_*`` hints): an unknown creation time is ``created_at: 0`` and an unknown model
    ``model: ""`` (deterministic placeholders; codecs read no clock).
    """
    fields = own(response.extra)
    status, details = encode_finish(response.finish_reason, response.native_finish_reason)
    body: JsonObject = {"id": response.id or "resp_0"}
    if response.created is not None:
        body["created_at"] = response.created
    elif fields.get("~no_created_at") is not True:
        body["created_at"] = 0
    body["status"] = status
    if fields.get("~no_incomplete_details") is not True:
        body["incomplete_details"] = details
    if response.model is not None:
        body["model"] = response.model
    elif fields.get("~no_model") is not True:
        body["model"] = ""
    body["output"] = output
    if fields.get("~no_usage") is not True:
        body["usage"] = None if response.usage is None else encode_usage(response.usage)
    return merge_fields(body, fields, _DEFAULTS)


def mint_item_id(part: Part, response_id: str | None, output_index: int) -> str:
    """A deterministic item id for a part that has none (position-based), marked minted.

    The decoder reads the mark and drops the id (``server_item_id``), so a client that
    sends this output back never makes the gateway reference it upstream.
    """
    prefix = "msg"
    if isinstance(part, ReasoningPart):
        prefix = "rs"
    elif isinstance(part, ToolCallPart):
        prefix = "fc"
    stem = (response_id or "resp_0").removeprefix("resp_")
    return f"{prefix}_{MINTED}{stem}_{output_index}"


def with_item_ids(group: ItemGroup, response_id: str | None, output_index: int) -> ItemGroup:
    """``group`` with an item id on every part (minted when missing)."""
    if group.kind == "single" and not isinstance(group.parts[0], ToolCallPart):
        return group
    if group.item_id is not None:
        return group
    item_id = mint_item_id(group.parts[0], response_id, output_index)
    parts: list[Part] = [_set_item_id(part, item_id) for part in group.parts]
    return ItemGroup(kind=group.kind, start=group.start, parts=parts)


def _set_item_id(part: Part, item_id: str) -> Part:
    if isinstance(part, TextPart | RefusalPart | ReasoningPart | ToolCallPart):
        return replace(part, item_id=item_id)
    return part


def output_groups(parts: Sequence[Part], response_id: str | None) -> list[ItemGroup]:
    """The output item groups of a response message, with ids, skipping control parts."""
    groups: list[ItemGroup] = []
    for group in group_parts(parts):
        part = group.parts[0]
        if not _is_output(part, group.start):
            continue
        groups.append(with_item_ids(group, response_id, len(groups)))
    return groups


def _is_output(part: Part, index: int) -> bool:
    match part:
        case InputRequestPart() | InputResponsePart() | ApprovalResponsePart():
            return False
        case ApprovalRequestPart():
            return part.call.owner == "hosted"
        case JsonPart() | MediaPart():
            raise LossyHistoryError(
                f"message.parts[{index}]", f"a {part.kind} part has no Responses output form"
            )
        case ReasoningPart():
            return not foreign_opaque_only(part)
        case TextPart() | RefusalPart() | ToolCallPart():
            return True
        case ToolResultPart():
            return True
        case HostedToolPart():
            # Another provider's hosted item (Gemini executableCode…) has no Responses output
            # type; the request encoder refuses or warns about it (hosted_item_not_carried).
            return part.provider == PROVIDER


def foreign_opaque_only(part: ReasoningPart) -> bool:
    """True for reasoning that holds only another provider's opaque payload (a Gemini
    thought signature, Anthropic redacted thinking): a Responses client can neither read
    nor return it, so it is no output item (an empty reasoning item would be all the
    client saw; the gateway's vault keeps the payload)."""
    opaque = part.opaque
    return not part.text and opaque is not None and opaque.format != ENCRYPTED_FORMAT


def output_items(parts: Sequence[Part], response_id: str | None) -> list[JsonValue]:
    """Rendered output items of a response message."""
    items: list[JsonValue] = []
    for group in output_groups(parts, response_id):
        rendered = render_group(group)
        if rendered is not None:
            items.append(rendered)
    return items

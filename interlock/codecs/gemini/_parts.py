"""Gemini ``Part`` ⇄ canonical part, one part at a time (decode side).

Mapping (provider-wire.md §3.2):

* ``{"text"}`` → :class:`TextPart`; ``{"text", "thought": true}`` → :class:`ReasoningPart`
  of kind ``summary``; a signed part with empty text (the signature-only part at the end of
  a stream) → :class:`ReasoningPart` of kind ``encrypted`` whose ``opaque`` is the signature.
* ``thoughtSignature`` stays on the exact part it came with: ``TextPart.signature``,
  ``ToolCallPart.signature`` or ``ReasoningPart.opaque``, data exactly as received.
* ``functionCall`` → :class:`ToolCallPart` (``args`` object → compact JSON text);
  ``functionResponse`` → :class:`ToolResultPart` (see :mod:`._results`);
  ``inlineData`` / ``fileData`` → :class:`MediaPart`;
  ``executableCode`` / ``codeExecutionResult``, Gemini 3's server-side ``toolCall`` /
  ``toolResponse`` and any part kind this codec does not know → :class:`HostedToolPart`
  holding the wire part verbatim (its field names camelCased, signature included).

Unknown part fields are kept in ``extra["gemini"]["fields"]``. A call without an ``id`` gets
a deterministic minted id and the marker ``mintedId`` so that re-encoding omits it again.
"""

from __future__ import annotations

from typing import Final, cast

from interlock.codecs._json import compact, loads
from interlock.codecs.gemini._media import decode_media
from interlock.codecs.gemini._results import decode_function_response, unwrap
from interlock.codecs.gemini._wire import (
    DIALECT,
    MINTED_ID_PREFIX,
    as_bool,
    as_object,
    as_str,
    camel_fields,
    signature,
    split_fields,
    wire_spelling,
)
from interlock.transcript import (
    HostedToolPart,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    MediaPart,
    Opaque,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from interlock.transcript import build as built

PART_FIELDS: Final = frozenset(
    {
        "text",
        "thought",
        "thoughtSignature",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
        "toolCall",
        "toolResponse",
    }
)
CALL_FIELDS: Final = frozenset({"id", "name", "args"})
HOSTED_KINDS: Final = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")
"""Parts the service produced by running a tool itself: code execution, and Gemini 3's
server-side tool calls and their responses (``toolCall`` / ``toolResponse``, each possibly
signed). Only Gemini can replay them."""


def canonical_arguments(args: JsonObject) -> str:
    """The canonical JSON text of a Gemini ``args`` object (compact, key order kept)."""
    return compact(args)


def decode_part(value: JsonValue, path: str, minted_id: str) -> Part:
    """One wire part as a canonical part; ``minted_id`` names a call that has no ``id``."""
    raw = as_object(value, path)
    fields, unknown = split_fields(raw, PART_FIELDS)
    signature_value = fields.pop("thoughtSignature", None)
    sealed = (
        signature(as_str(signature_value, f"{path}.thoughtSignature"))
        if signature_value is not None
        else None
    )
    if "functionCall" in fields:
        return _decode_call(fields, unknown, sealed, path, minted_id)
    if "functionResponse" in fields:
        body = fields.pop("functionResponse")
        return decode_function_response(
            body, f"{path}.functionResponse", _leftover(fields, unknown)
        )
    if "inlineData" in fields or "fileData" in fields:
        return _decode_media(fields, unknown, path)
    for kind in HOSTED_KINDS:
        if kind in fields:
            # Kept verbatim, signature included, field names camelCased (their shapes are
            # known; ``args`` / ``response`` are the tool's data and keep their keys): only
            # Gemini can replay these, exactly where they were.
            item = cast(JsonObject, wire_spelling(raw))
            return HostedToolPart(provider="google", item_type=kind, item=item)
    if "text" in fields:
        return _decode_text(fields, unknown, sealed, path)
    if sealed is not None and not fields:
        marks: JsonObject = {"noText": True}
        if unknown:
            marks["fields"] = unknown
        return ReasoningPart(reasoning_kind="encrypted", opaque=sealed, extra={DIALECT: marks})
    item = camel_fields(raw)
    return HostedToolPart(provider="google", item_type=next(iter(item), "part"), item=item)


def plain_part(item: JsonValue, content: int, position: int) -> Part | None:
    """A part of the commonest shapes decoded directly: ``{"text"}`` (with a
    ``thoughtSignature`` when the text is not empty, or ``"thought": true``), a
    ``functionCall`` of ``id`` / ``name`` / ``args`` (signed or not) and a
    ``functionResponse`` of ``id`` / ``name`` / ``response``, every key in camelCase and of
    the right type. ``None`` for any other part, which :func:`decode_part` then decodes.
    Equal to what :func:`decode_part` gives for the same part at ``contents[content]``."""
    if not isinstance(item, dict):
        return None
    size, data = len(item), item.get("thoughtSignature")
    if data is not None:
        if not isinstance(data, str):
            return None
        size -= 1
    text = item.get("text")
    if text is not None:
        if not isinstance(text, str):
            return None
        thought = item.get("thought")
        if thought is None and size == 1:
            if data is None:
                return built.text_part(text)
            return built.text_part(text, signature=signature(data)) if text else None
        if thought is not True or size != 2:
            return None
        sealed = None if data is None else signature(data)
        return built.reasoning_part("summary", text, opaque=sealed, extra={DIALECT: {}})
    if size != 1:
        return None
    call = item.get("functionCall")
    if call is not None:
        return _plain_call(call, data, f"{MINTED_ID_PREFIX}{content}_{position}")
    return None if data is not None else _plain_result(item.get("functionResponse"))


def _plain_call(call: JsonValue, data: str | None, minted_id: str) -> ToolCallPart | None:
    if not isinstance(call, dict):
        return None
    name, args, call_id = call.get("name"), call.get("args"), call.get("id")
    if not isinstance(name, str) or len(call) != 1 + (args is not None) + (call_id is not None):
        return None
    if (args is not None and not isinstance(args, dict)) or not isinstance(call_id, str | None):
        return None
    return built.tool_call_part(
        minted_id if call_id is None else call_id,
        name,
        "" if args is None else compact(args),
        signature=None if data is None else signature(data),
        extra=None if call_id is not None else {DIALECT: {"mintedId": True}},
    )


def _plain_result(body: JsonValue) -> ToolResultPart | None:
    if not isinstance(body, dict):
        return None
    name, response, call_id = body.get("name"), body.get("response"), body.get("id")
    if not isinstance(name, str) or not isinstance(response, dict):
        return None
    if len(body) != 2 + (call_id is not None) or not isinstance(call_id, str | None):
        return None
    output = response.get("output") if len(response) == 1 else None
    if isinstance(output, str):  # the commonest response: what unwrap gives for it
        outcome, first = "success", built.text_part(output)
    else:
        outcome, first = unwrap(response)
    return built.tool_result_part(
        "" if call_id is None else call_id,
        () if first is None else (first,),
        outcome=outcome,
        name=name,
        extra=None if call_id is not None else {DIALECT: {"mintedId": True}},
    )


def _leftover(fields: dict[str, JsonValue], unknown: JsonObject) -> JsonObject:
    """Known part fields this part kind does not use, kept verbatim with the unknown ones."""
    if not fields:
        return unknown
    return {**unknown, **fields}


def _decode_text(
    fields: dict[str, JsonValue], unknown: JsonObject, sealed: Opaque | None, path: str
) -> Part:
    text = as_str(fields.pop("text"), f"{path}.text")
    thought_value = fields.pop("thought", None)
    thought = thought_value is not None and as_bool(thought_value, f"{path}.thought")
    if thought_value is False:
        unknown = {**unknown, "thought": False}
    marks: JsonObject = {}
    rest = _leftover(fields, unknown)
    if rest:
        marks["fields"] = rest
    if thought:
        return ReasoningPart(
            reasoning_kind="summary", text=text, opaque=sealed, extra={DIALECT: marks}
        )
    if sealed is not None and not text:
        return ReasoningPart(reasoning_kind="encrypted", opaque=sealed, extra={DIALECT: marks})
    return TextPart(text=text, signature=sealed, extra={DIALECT: marks} if marks else {})


def _decode_call(
    fields: dict[str, JsonValue],
    unknown: JsonObject,
    sealed: Opaque | None,
    path: str,
    minted_id: str,
) -> ToolCallPart:
    where = f"{path}.functionCall"
    call, call_unknown = split_fields(as_object(fields.pop("functionCall"), where), CALL_FIELDS)
    name = as_str(call.get("name"), f"{where}.name")
    marks: JsonObject = {}
    nested = call_unknown.get("thoughtSignature")
    if sealed is None and isinstance(nested, str):
        # Gemini 2.x sometimes nested the signature inside functionCall (TanStack/ai#459).
        sealed = signature(nested)
        call_unknown = {
            key: item for key, item in call_unknown.items() if key != "thoughtSignature"
        }
        marks["signatureIn"] = "functionCall"
    arguments = ""
    if "args" in call:
        arguments = canonical_arguments(as_object(call["args"], f"{where}.args"))
    call_id = call.get("id")
    if call_id is None:
        call_id = minted_id
        marks["mintedId"] = True
    else:
        call_id = as_str(call_id, f"{where}.id")
    rest = _leftover(fields, unknown)
    if rest:
        marks["fields"] = rest
    if call_unknown:
        marks["call"] = call_unknown
    return ToolCallPart(
        call_id=call_id,
        name=name,
        arguments=arguments,
        signature=sealed,
        extra={DIALECT: marks} if marks else {},
    )


def _decode_media(fields: dict[str, JsonValue], unknown: JsonObject, path: str) -> MediaPart:
    inline = "inlineData" in fields
    key = "inlineData" if inline else "fileData"
    part = decode_media(fields.pop(key), f"{path}.{key}", inline)
    rest = _leftover(fields, unknown)
    if not rest:
        return part
    marks = dict(part.extra.get(DIALECT, {}))
    marks["fields"] = rest
    return MediaPart(
        media_type=part.media_type,
        data=part.data,
        uri=part.uri,
        filename=part.filename,
        extra={DIALECT: marks},
    )


def require_object_arguments(part: ToolCallPart, location: str) -> JsonObject | None:
    """The call's arguments as a JSON object (``None`` for empty text), else raise.

    Gemini ``args`` is an object; malformed or non-object argument text cannot be carried
    and is never "fixed" (provider-wire.md trap 19).
    """
    if not part.arguments.strip():
        return None
    try:
        parsed = loads(part.arguments)
    except ValueError as error:
        raise LossyHistoryError(
            location,
            f"tool call {part.name!r} has malformed JSON arguments ({error}); "
            "Gemini functionCall.args must be a JSON object",
            code="malformed_arguments",
        ) from error
    if not isinstance(parsed, dict):
        raise LossyHistoryError(
            location,
            f"tool call {part.name!r} arguments are not a JSON object; "
            "Gemini functionCall.args must be a JSON object",
            code="malformed_arguments",
        )
    return parsed  # pyright: ignore[reportUnknownVariableType] -- json.loads returns Any

"""Wire content blocks → canonical parts (decode side).

* ``text`` → :class:`TextPart`; ``citations`` → its citations (:mod:`._citations`),
  ``cache_control`` and other fields stay in ``fields``.
* ``image`` / ``document`` with a ``base64``, ``url``, ``file`` or ``text`` source →
  :class:`MediaPart` (data exactly as received; a text source is carried base64-encoded
  and marked, so it comes back as text).
* ``thinking`` → a ``raw`` :class:`ReasoningPart` whose ``opaque`` is the signature
  (``anthropic.thinking_signature``); an empty or missing signature gives no opaque, so
  the block can never be replayed with ``""`` (trap A17). ``redacted_thinking`` → an
  ``encrypted`` reasoning part carrying ``anthropic.redacted_thinking``.
* ``tool_use`` → :class:`ToolCallPart` (``input`` as compact JSON text).
* ``server_tool_use``, every server-tool result and every block type this codec does not
  name → :class:`HostedToolPart` (``provider="anthropic"``), verbatim: other dialects
  refuse or drop it explicitly, Anthropic gets it back unchanged.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

from interlock.codecs._json import compact as compact_json
from interlock.codecs._media_kind import wildcard
from interlock.codecs.anthropic._citations import decode_citations
from interlock.codecs.anthropic._wire import (
    DIALECT,
    PROVIDER,
    as_bool,
    as_list,
    as_object,
    as_str,
    marks,
    redacted_thinking,
    split,
    thinking_signature,
)
from interlock.transcript import (
    DecodeError,
    HostedToolPart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    OutputPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from interlock.transcript import build as built

_TEXT: Final = frozenset({"type", "text"})
_MEDIA: Final = frozenset({"type", "source"})
_THINKING: Final = frozenset({"type", "thinking", "signature"})
_REDACTED: Final = frozenset({"type", "data"})
_TOOL_USE: Final = frozenset({"type", "id", "name", "input"})
_TOOL_RESULT: Final = frozenset({"type", "tool_use_id", "content", "is_error"})
_SOURCE_KEYS: Final = {"base64": ("media_type", "data"), "url": ("url",), "file": ("file_id",)}


def compact(value: JsonValue) -> str:
    """A tool ``input`` as the JSON text a tool call carries."""
    return compact_json(value)


def decode_block(value: JsonValue, path: str, issuer: str = PROVIDER) -> Part:
    """One content block of a message (never a ``tool_result``: see :func:`decode_result`);
    its signature or redacted data named as issued by vendor ``issuer``."""
    block = as_object(value, path)
    kind = block.get("type")
    match kind:
        case "text":
            fields, rest = split(block, _TEXT)
            text = as_str(fields.get("text"), f"{path}.text")
            citations = decode_citations(rest, text)
            return TextPart(text=text, citations=citations, extra=marks(fields=rest))
        case "image" | "document":
            return decode_media(block, path)
        case "thinking":
            fields, rest = split(block, _THINKING)
            text = as_str(fields.get("thinking"), f"{path}.thinking")
            signed = fields.get("signature")
            opaque = None
            if signed is not None and as_str(signed, f"{path}.signature"):
                opaque = thinking_signature(as_str(signed, f"{path}.signature"), issuer)
            own = marks(fields=rest, unsigned="" if signed is None else signed == "")
            return ReasoningPart(reasoning_kind="raw", text=text, opaque=opaque, extra=own)
        case "redacted_thinking":
            fields, rest = split(block, _REDACTED)
            data = as_str(fields.get("data"), f"{path}.data")
            return ReasoningPart(
                reasoning_kind="encrypted",
                opaque=redacted_thinking(data, issuer),
                extra=marks(fields=rest),
            )
        case "tool_use":
            return decode_tool_use(block, path)
        case str():
            return HostedToolPart(provider=PROVIDER, item_type=kind, item=block)
        case _:
            raise DecodeError(f"{path}.type", "expected a content block type string")


def plain_block(block: JsonValue, assistant: bool, issuer: str = PROVIDER) -> Part | None:
    """A content block of the commonest shapes decoded directly: ``text`` with nothing
    else; in an assistant message, ``tool_use`` of ``id`` / ``name`` / ``input`` (an object)
    and ``thinking`` with a string signature. ``None`` for any other block, which
    :func:`decode_block` then decodes. Equal to what :func:`decode_block` gives."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return built.text_part(text) if isinstance(text, str) and len(block) == 2 else None
    if not assistant:
        return None
    if kind == "tool_use" and len(block) == 4:
        call_id, name, call_input = block.get("id"), block.get("name"), block.get("input")
        if not (isinstance(call_id, str) and isinstance(name, str)):
            return None
        if not isinstance(call_input, dict):
            return None
        return built.tool_call_part(call_id, name, compact(call_input))
    thinking, signed = block.get("thinking"), block.get("signature")
    if kind != "thinking" or len(block) != 3:
        return None
    if not (isinstance(thinking, str) and isinstance(signed, str)):
        return None
    if not signed:
        return built.reasoning_part("raw", thinking, extra=marks(unsigned=True))
    return built.reasoning_part("raw", thinking, opaque=thinking_signature(signed, issuer))


def plain_result(block: JsonObject, name: str | None) -> ToolResultPart | None:
    """A ``tool_result`` of ``tool_use_id`` and string ``content`` (``is_error`` a boolean
    or absent) decoded directly; ``None`` for any other, which :func:`decode_result` then
    decodes. Equal to what it gives."""
    call_id, content, error = block.get("tool_use_id"), block.get("content"), block.get("is_error")
    if not (isinstance(call_id, str) and isinstance(content, str)):
        return None
    if len(block) != 3 + (error is not None) or not isinstance(error, bool | None):
        return None
    return built.tool_result_part(
        call_id,
        (built.text_part(content),),
        outcome="failed" if error else "success",
        name=name,
        extra=marks(content="string", isErrorFalse=error is False),
    )


def decode_tool_use(block: JsonObject, path: str) -> ToolCallPart:
    """A ``tool_use`` block as a tool call (the input must be a JSON object)."""
    fields, rest = split(block, _TOOL_USE)
    call_input = fields.get("input", {})
    as_object(call_input, f"{path}.input")
    return ToolCallPart(
        call_id=as_str(fields.get("id"), f"{path}.id"),
        name=as_str(fields.get("name"), f"{path}.name"),
        arguments=compact(call_input),
        extra=marks(fields=rest),
    )


def decode_media(block: JsonObject, path: str) -> MediaPart | JsonPart:
    """An ``image`` or ``document`` block; a source this codec does not map stays verbatim."""
    fields, rest = split(block, _MEDIA)
    source = as_object(fields.get("source"), f"{path}.source")
    source_type = source.get("type")
    if not isinstance(source_type, str) or source_type not in (*_SOURCE_KEYS, "text"):
        return JsonPart(value=block, extra=marks(block=True))
    media_type = source.get("media_type")
    media = None if media_type is None else as_str(media_type, f"{path}.source.media_type")
    is_image = block["type"] == "image"
    if media is None and is_image and source_type == "url":
        media = wildcard("image")  # a URL source has no media type: the block says image
    own = marks(
        fields=rest,
        block=block["type"] if is_image != (media or "").startswith("image/") else "",
        source={key: item for key, item in source.items() if key not in ("type", "media_type")}
        if source_type in ("url", "file")
        else {},
        sourceType=source_type if source_type in ("file", "text") else "",
    )
    if source_type == "base64":
        data = as_str(source.get("data"), f"{path}.source.data")
        return MediaPart(media_type=media, data=data, extra=own)
    if source_type == "text":
        text = as_str(source.get("data"), f"{path}.source.data")
        encoded = base64.b64encode(text.encode()).decode()
        return MediaPart(media_type=media or "text/plain", data=encoded, extra=own)
    key = _SOURCE_KEYS[source_type][0]
    uri = as_str(source.get(key), f"{path}.source.{key}")
    return MediaPart(media_type=media, uri=uri, extra=own)


def text_source(part: MediaPart) -> str | None:
    """The text of a text-source document (``None`` when the data is not UTF-8 base64)."""
    try:
        return base64.b64decode(part.data or "", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def decode_result(value: JsonObject, path: str, name: str | None) -> ToolResultPart:
    """A ``tool_result`` block; ``name`` is the matching ``tool_use``'s, when known."""
    fields, rest = split(value, _TOOL_RESULT)
    call_id = as_str(fields.get("tool_use_id"), f"{path}.tool_use_id")
    content = fields.get("content")
    output: tuple[OutputPart, ...] = ()
    shape = "absent"
    if isinstance(content, str):
        output, shape = (TextPart(text=content),), "string"
    elif content is not None:
        output = tuple(
            _output(item, f"{path}.content[{index}]")
            for index, item in enumerate(as_list(content, f"{path}.content"))
        )
        shape = "list"
    error = fields.get("is_error")
    failed = error is not None and as_bool(error, f"{path}.is_error")
    return ToolResultPart(
        call_id=call_id,
        name=name,
        output=output,
        outcome="failed" if failed else "success",
        extra=marks(fields=rest, content=shape, isErrorFalse=error is False),
    )


def _output(value: JsonValue, path: str) -> OutputPart:
    """One block of a ``tool_result``'s content list."""
    part = decode_block(value, path)
    if isinstance(part, TextPart | MediaPart | JsonPart):
        return part
    return JsonPart(value=as_object(value, path), extra={DIALECT: {"block": True}})

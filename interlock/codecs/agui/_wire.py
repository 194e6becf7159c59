"""Small wire helpers shared by the inbound and outbound halves.

Every dict built here is AG-UI 1.0 wire JSON: camelCase keys, optional fields omitted
(never ``null``). Media travels as 1.0 content parts (``image``/``audio``/``video``/
``document`` with a ``data``/``url``/``file`` source).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias, cast

import orjson
from ag_ui.core import (
    AudioPart,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    UrlSource,
    VideoPart,
)
from ag_ui.core import TextPart as AguiTextPart

from interlock.codecs._media_kind import KINDS, concrete, wildcard
from interlock.transcript import JsonObject, JsonPart, JsonValue, MediaPart, OutputPart, TextPart

DIALECT = "agui"
"""The key this codec uses in ``Part.extra`` / ``Message.extra``."""

MediaKind: TypeAlias = Literal["image", "audio", "video", "document"]
AguiContentPart: TypeAlias = AguiTextPart | ImagePart | AudioPart | VideoPart | DocumentPart
_DEFAULT_MIME = "application/octet-stream"


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""What ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` encodes with (that
call builds this encoder anew each time: options other than the defaults)."""


def compact_json(value: JsonValue) -> str:
    """``value`` as compact JSON text (no spaces, UTF-8 kept).

    An object of string members (a rendered text message: ``id``, ``role``, ``content``)
    is written by orjson, which escapes every character of a string as ``json`` does with
    ``ensure_ascii=False`` (only floats are spelled differently, and there are none);
    a lone surrogate, which orjson refuses, and anything else go through ``json``.
    """
    if type(value) is dict and set(map(type, value.values())) <= _STRINGS:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate, a key not a string
            pass
    return _COMPACT.encode(value)


_STRINGS = {str}


def without_none(fields: Mapping[str, JsonValue]) -> JsonObject:
    """``fields`` minus the keys whose value is ``None`` (the 1.0 null-omission rule)."""
    return {key: value for key, value in fields.items() if value is not None}


def agui_extra(extra: Mapping[str, JsonObject]) -> JsonObject:
    """This codec's own entry in a part's or message's ``extra`` (empty when absent)."""
    return extra.get(DIALECT, {})


def _media_kind(part: MediaPart) -> MediaKind:
    declared = agui_extra(part.extra).get("type")
    kinds: tuple[MediaKind, ...] = ("image", "audio", "video", "document")
    for kind in kinds:
        if declared == kind:
            return kind
    media_type = part.media_type or ""
    for prefix in kinds[:3]:
        if media_type.startswith(prefix + "/"):
            return prefix
    return "document"


def _media_source(part: MediaPart) -> JsonObject:
    own = agui_extra(part.extra)
    if part.data is not None:
        mime = concrete(part.media_type) or _DEFAULT_MIME
        return {"type": "data", "value": part.data, "mimeType": mime}
    source_type = "file" if own.get("sourceType") == "file" else "url"
    provider = own.get("provider") if source_type == "file" else None
    return without_none(
        {
            "type": source_type,
            "value": part.uri or "",
            "mimeType": concrete(part.media_type),
            "provider": provider,
        }
    )


def media_to_content_part(part: MediaPart) -> JsonObject:
    """A transcript media part as an AG-UI 1.0 content part."""
    own = agui_extra(part.extra)
    metadata = own.get("metadata")
    metadata_object = dict(cast(JsonObject, metadata)) if isinstance(metadata, dict) else {}
    if part.filename is not None:
        metadata_object["filename"] = part.filename
    return without_none(
        {
            "type": _media_kind(part),
            "id": own.get("id") if isinstance(own.get("id"), str) else None,
            "source": _media_source(part),
            "metadata": metadata_object or None,
        }
    )


def output_to_content(output: Sequence[OutputPart]) -> str | list[JsonValue]:
    """Tool output as ``TOOL_CALL_RESULT.content``: a string unless media is present.

    Text is kept verbatim and JSON values are serialized compactly, so a text-only result
    reads exactly as the tool produced it.
    """
    if not any(isinstance(part, MediaPart) for part in output):
        return "".join(_output_text(part) for part in output)
    parts: list[JsonValue] = []
    for part in output:
        if isinstance(part, MediaPart):
            parts.append(media_to_content_part(part))
        else:
            parts.append({"type": "text", "text": _output_text(part)})
    return parts


def _output_text(part: OutputPart) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, JsonPart):
        return compact_json(part.value)
    return ""


def content_part_to_part(part: AguiContentPart) -> TextPart | MediaPart:
    """An inbound AG-UI content part as a transcript part (ids and metadata kept in extra)."""
    own: JsonObject = without_none({"id": part.id, "metadata": cast(JsonValue, part.metadata)})
    if isinstance(part, AguiTextPart):
        return TextPart(text=part.text, extra={DIALECT: own} if own else {})
    own["type"] = part.type
    source = part.source
    metadata = cast(JsonValue, part.metadata)
    filename = metadata.get("filename") if isinstance(metadata, dict) else None
    name = filename if isinstance(filename, str) else None
    if isinstance(source, DataSource):
        return MediaPart(
            data=source.value, media_type=source.mime_type, filename=name, extra={DIALECT: own}
        )
    if isinstance(source, FileSource):
        own["sourceType"] = "file"
        if source.provider is not None:
            own["provider"] = source.provider
    else:
        assert isinstance(source, UrlSource)
    media_type = source.mime_type
    if media_type is None and isinstance(source, UrlSource) and part.type in KINDS:
        media_type = wildcard(part.type)  # a URL without a type: the part type names its kind
    return MediaPart(uri=source.value, media_type=media_type, filename=name, extra={DIALECT: own})

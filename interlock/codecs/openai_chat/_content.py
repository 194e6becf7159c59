"""Message content both ways: a string or a list of text, image, audio, file, refusal parts.

Media is canonical :class:`MediaPart`: a ``data:`` URI splits into ``media_type`` + base64
``data``; an uploaded file id becomes the URI ``openai-file:<id>``. The wire form a part
came in (``image_url`` / ``input_audio`` / ``file``) is kept in ``extra[LAYOUT]["type"]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from interlock.codecs._json import compact
from interlock.codecs._media_kind import wildcard
from interlock.codecs._media_reach import (
    UNREACHABLE,
    google_only_reason,
    openai_file_id,
    openai_file_uri,
)
from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._thinking import decode_thinking
from interlock.codecs.openai_chat._wire import (
    LAYOUT,
    as_list,
    as_object,
    as_str,
    extra_of,
    merge_unknown,
    outer_unknown,
    required,
    rest,
    shadow,
    unshadow,
    with_extra,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
)

_AUDIO_FORMATS = {"mp3": "audio/mpeg", "wav": "audio/wav"}
_AUDIO_TYPES = {media: fmt for fmt, media in _AUDIO_FORMATS.items()}

ContentPart = TextPart | RefusalPart | MediaPart | ReasoningPart


def decode_content(value: JsonValue, path: str, *, allow: frozenset[str]) -> list[ContentPart]:
    """Decode a ``content`` string or list; ``allow`` names the part types this role takes."""
    if isinstance(value, str):
        return [TextPart(text=value)]
    items = as_list(value, path)
    return [_decode_part(item, f"{path}[{i}]", allow) for i, item in enumerate(items)]


def _decode_part(value: JsonValue, path: str, allow: frozenset[str]) -> ContentPart:
    item = as_object(value, path)
    kind = as_str(required(item, "type", path), f"{path}.type")
    if kind not in allow:
        raise DecodeError(f"{path}.type", f"content part type {kind!r} is not allowed here")
    match kind:
        case "text":
            text = as_str(required(item, "text", path), f"{path}.text")
            return TextPart(text=text, extra=with_extra(rest(item, {"type", "text"})))
        case "refusal":
            text = as_str(required(item, "refusal", path), f"{path}.refusal")
            extra = with_extra(rest(item, {"type", "refusal"}), {"in": "content"})
            return RefusalPart(text=text, extra=extra)
        case "thinking":
            return decode_thinking(item, path)  # Mistral (Magistral) reasoning
        case "image_url" | "video_url":
            return _decode_image(item, path, kind)
        case "input_audio":
            return _decode_audio(item, path)
        case _:
            return _decode_file(item, path)


def _decode_image(item: JsonObject, path: str, kind: str) -> MediaPart:
    """``image_url`` (OpenAI) or ``video_url`` (OpenRouter): a URL or a ``data:`` URI."""
    inner = as_object(required(item, kind, path), f"{path}.{kind}")
    url = as_str(required(inner, "url", f"{path}.{kind}"), f"{path}.{kind}.url")
    unknown = shadow(rest(item, {"type", kind}), kind, rest(inner, {"url"}))
    media_type, data = split_data_uri(url)
    layout: JsonObject = {"type": kind}
    if data is None:  # a URL: the part type is all that says what it is
        named = wildcard("image" if kind == "image_url" else "video")
        return MediaPart(media_type=named, uri=url, extra=with_extra(unknown, layout))
    return MediaPart(media_type=media_type, data=data, extra=with_extra(unknown, layout))


def _decode_audio(item: JsonObject, path: str) -> MediaPart:
    where = f"{path}.input_audio"
    inner = as_object(required(item, "input_audio", path), where)
    data = as_str(required(inner, "data", where), f"{where}.data")
    audio_format = as_str(required(inner, "format", where), f"{where}.format")
    unknown = shadow(
        rest(item, {"type", "input_audio"}), "input_audio", rest(inner, {"data", "format"})
    )
    media_type = _AUDIO_FORMATS.get(audio_format, f"audio/{audio_format}")
    extra = with_extra(unknown, {"type": "input_audio"})
    return MediaPart(media_type=media_type, data=data, extra=extra)


def _decode_file(item: JsonObject, path: str) -> MediaPart:
    where = f"{path}.file"
    inner = as_object(required(item, "file", path), where)
    inner_unknown = rest(inner, {"file_data", "file_id", "filename"})
    unknown = shadow(rest(item, {"type", "file"}), "file", inner_unknown)
    filename = inner.get("filename")
    name = None if filename is None else as_str(filename, f"{where}.filename")
    layout: JsonObject = {"type": "file"}
    if "file_data" in inner:
        raw = as_str(inner["file_data"], f"{where}.file_data")
        if _URL.match(raw):  # a URL, not data (seen in recorded traffic): never base64
            layout["urlData"] = True
            extra = with_extra(unknown, layout)
            return MediaPart(uri=raw, filename=name, extra=extra)
        media_type, data = split_data_uri(raw)
        if data is None:
            media_type, data, layout["bare"] = None, raw, True
        extra = with_extra(unknown, layout)
        return MediaPart(media_type=media_type, data=data, filename=name, extra=extra)
    if "file_id" in inner:
        file_id = as_str(inner["file_id"], f"{where}.file_id")
        extra = with_extra(unknown, layout)
        return MediaPart(uri=openai_file_uri(file_id), filename=name, extra=extra)
    raise DecodeError(where, "a file part needs 'file_data' or 'file_id'")


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""A URL's scheme; base64 never holds ``:``, so ``file_data`` matching it is a URL."""


def split_data_uri(url: str) -> tuple[str | None, str | None]:
    """``(media_type, base64 data)`` of a base64 ``data:`` URI, else ``(None, None)``."""
    if not url.startswith("data:"):
        return None, None
    head, comma, data = url[5:].partition(",")
    if not comma or not head.endswith(";base64"):
        return None, None
    return head.removesuffix(";base64") or None, data


def data_uri(media_type: str | None, data: str) -> str:
    """A base64 ``data:`` URI."""
    return f"data:{media_type or 'application/octet-stream'};base64,{data}"


def encode_text_content(
    parts: Sequence[TextPart], *, as_parts: bool
) -> str | list[JsonValue] | None:
    """Text parts as a ``content`` string, or a list when asked or when boundaries matter."""
    if not parts:
        return None
    if len(parts) == 1 and not as_parts:
        return parts[0].text
    return [encode_text_part(part) for part in parts]


def encode_text_part(part: TextPart) -> JsonObject:
    """One ``{"type": "text"}`` content part."""
    return merge_unknown({"type": "text", "text": part.text}, part.extra)


def encode_refusal_part(part: RefusalPart) -> JsonObject:
    """One ``{"type": "refusal"}`` content part."""
    return merge_unknown({"type": "refusal", "refusal": part.text}, part.extra)


def encode_user_content(
    parts: Sequence[Part], location: str, *, as_parts: bool, degrade: Degradations
) -> str | list[JsonValue]:
    """User content: text and media; JSON becomes text (with a warning)."""
    if not as_parts and len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    out: list[JsonValue] = []
    for index, part in enumerate(parts):
        where = f"{location}.parts[{index}]"
        if isinstance(part, TextPart):
            out.append(encode_text_part(part))
        elif isinstance(part, MediaPart):
            encoded = encode_media(part, where, degrade)
            if encoded is not None:
                out.append(encoded)
        elif isinstance(part, JsonPart):
            degrade.drop("json_as_text", where, "a JSON part is sent as its JSON text")
            out.append({"type": "text", "text": json_text(part.value)})
    return out


def json_text(value: JsonValue) -> str:
    """The compact JSON text of ``value`` (the canonical tool-result serialization)."""
    return compact(value)


def encode_media(part: MediaPart, location: str, degrade: Degradations) -> JsonObject | None:
    """A media part in its Chat form, or ``None`` (after a policy decision) when impossible."""
    unreachable = google_only_reason(part, "an OpenAI Chat Completions upstream")
    if unreachable is not None:
        degrade.lossy(UNREACHABLE, location, unreachable)
        return None
    unknown = extra_of(part.extra)
    wire_type = extra_of(part.extra, LAYOUT).get("type") or _infer_type(part)
    if wire_type != "file" and openai_file_id(part) is not None:
        reason = "an image by OpenAI file id has no Chat Completions form (only files have one)"
        degrade.lossy("media_unsupported", location, reason)
        return None
    if wire_type in ("image_url", "video_url") and (part.uri is not None or part.data is not None):
        url = part.uri if part.uri is not None else data_uri(part.media_type, part.data or "")
        return _media(str(wire_type), {"url": url}, unknown)
    if wire_type == "input_audio" and part.data is not None and part.media_type in _AUDIO_TYPES:
        inner: JsonObject = {"data": part.data, "format": _AUDIO_TYPES[part.media_type]}
        return _media("input_audio", inner, unknown)
    file_inner = _file_inner(part)
    if file_inner is not None:
        return _media("file", file_inner, unknown)
    reason = f"media {part.media_type or part.uri!r} has no Chat Completions content form"
    degrade.lossy("media_unsupported", location, reason)
    return None


def _infer_type(part: MediaPart) -> str:
    media_type = part.media_type or ""
    if media_type.startswith("image/"):
        return "image_url"
    if media_type in _AUDIO_TYPES:
        return "input_audio"
    return "file"


def _file_inner(part: MediaPart) -> JsonObject | None:
    inner: JsonObject = {}
    if part.data is not None:
        bare = extra_of(part.extra, LAYOUT).get("bare")
        inner["file_data"] = part.data if bare else data_uri(part.media_type, part.data)
    elif (file_id := openai_file_id(part)) is not None:
        inner["file_id"] = file_id
    elif part.uri is not None and extra_of(part.extra, LAYOUT).get("urlData"):
        inner["file_data"] = part.uri  # it came as a URL in file_data: it goes back as one
    else:
        return None
    if part.filename is not None:
        inner["filename"] = part.filename
    return inner


def _media(kind: str, inner: JsonObject, unknown: JsonObject) -> JsonObject:
    built: JsonObject = {"type": kind, kind: unshadow(inner, unknown, kind)}
    return merge_unknown(built, outer_unknown(unknown, kind))

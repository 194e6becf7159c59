"""Message content parts and tool outputs ↔ canonical text, refusal and media parts.

Input parts (``input_text``, ``input_image``, ``input_file``) belong to user, system and
developer messages and to list-form ``function_call_output.output``; output parts
(``output_text``, ``refusal``) belong to assistant messages (the service rejects
``input_text`` there: provider-wire §1.2, trap 28).
"""

from __future__ import annotations

from typing import cast

from interlock.codecs._json import compact
from interlock.codecs._logprobs import decode_openai_tokens, encode_openai_tokens
from interlock.codecs._media_kind import wildcard
from interlock.codecs._media_reach import openai_file_id, openai_file_uri
from interlock.codecs.openai_responses._citations import decode_citations, encode_annotations
from interlock.codecs.openai_responses._wire import (
    as_list,
    as_object,
    hint,
    merge_fields,
    own,
    required_str,
    split_fields,
    string,
    wrap,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    OutputPart,
    RefusalPart,
    TextPart,
)

_IMAGE_DEFAULTS: JsonObject = {"detail": "auto"}
_OUTPUT_TEXT_DEFAULTS: JsonObject = {"annotations": []}
_RAW = "~raw"
_TYPE = "~type"
_PLAIN = "~plain"


def _parse_data_url(url: str) -> tuple[str, str] | None:
    """``(media_type, base64 data)`` for a ``data:<type>;base64,<data>`` URL, else ``None``."""
    if not url.startswith("data:"):
        return None
    head, comma, body = url[5:].partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    return head.removesuffix(";base64"), body


def _media_from(location: str, fields: JsonObject, filename: str | None) -> MediaPart:
    parsed = _parse_data_url(location)
    if parsed is None:
        return MediaPart(uri=location, filename=filename, extra=wrap(fields))
    media_type, data = parsed
    return MediaPart(media_type=media_type, data=data, filename=filename, extra=wrap(fields))


def _decode_image(data: JsonObject, path: str) -> MediaPart:
    fields = split_fields(data, {"type", "image_url", "file_id"}, _IMAGE_DEFAULTS)
    url = data.get("image_url")
    if isinstance(url, str):
        part = _media_from(url, fields, None)
        if part.media_type is None:  # a URL: only the part type says it is an image
            part = MediaPart(media_type=wildcard("image"), uri=part.uri, extra=part.extra)
    elif isinstance(data.get("file_id"), str):
        uri = openai_file_uri(string(data["file_id"], f"{path}.file_id"))
        part = MediaPart(media_type=wildcard("image"), uri=uri, extra=wrap(fields))
    else:
        raise DecodeError(path, "input_image needs a string image_url or file_id")
    if not (part.media_type or "").startswith("image"):
        part = MediaPart(
            media_type=part.media_type,
            data=part.data,
            uri=part.uri,
            extra=wrap({**own(part.extra), _TYPE: "input_image"}),
        )
    return part


def _decode_file(data: JsonObject, path: str) -> MediaPart:
    fields = split_fields(data, {"type", "file_data", "file_url", "file_id", "filename"})
    filename = data.get("filename")
    if filename is not None:
        filename = string(filename, f"{path}.filename")
    if isinstance(data.get("file_data"), str):
        raw = cast(str, data["file_data"])
        if _parse_data_url(raw) is None:
            fields[_PLAIN] = True
            return MediaPart(data=raw, filename=filename, extra=wrap(fields))
        part = _media_from(raw, fields, filename)
    elif isinstance(data.get("file_url"), str):
        part = MediaPart(uri=cast(str, data["file_url"]), filename=filename, extra=wrap(fields))
    elif isinstance(data.get("file_id"), str):
        uri = openai_file_uri(cast(str, data["file_id"]))
        part = MediaPart(uri=uri, filename=filename, extra=wrap(fields))
    else:
        raise DecodeError(path, "input_file needs file_data, file_url or file_id")
    if (part.media_type or "").startswith("image"):
        return MediaPart(
            media_type=part.media_type,
            data=part.data,
            filename=part.filename,
            extra=wrap({**own(part.extra), _TYPE: "input_file"}),
        )
    return part


def decode_input_part(value: JsonValue, path: str) -> OutputPart:
    """One input content part (unknown part types are carried verbatim as a JSON part)."""
    data = as_object(value, path)
    kind = data.get("type")
    match kind:
        case "input_text" | "output_text":
            text = required_str(data, "text", path)
            return TextPart(text=text, extra=wrap(split_fields(data, {"type", "text"})))
        case "input_image":
            return _decode_image(data, path)
        case "input_file":
            return _decode_file(data, path)
        case str():
            return JsonPart(value=data, extra=wrap({_RAW: True}))
        case _:
            raise DecodeError(f"{path}.type", "content part needs a string type")


def encode_input_part(part: OutputPart) -> JsonObject:
    """One canonical text/JSON/media part as an input content part."""
    match part:
        case TextPart():
            return merge_fields({"type": "input_text", "text": part.text}, own(part.extra))
        case JsonPart():
            if hint(part.extra, _RAW) is True and isinstance(part.value, dict):
                return part.value
            text = _json_text(part.value)
            return merge_fields({"type": "input_text", "text": text}, own(part.extra))
        case MediaPart():
            return _encode_media(part)


def _json_text(value: JsonValue) -> str:

    return compact(value)


def _location(part: MediaPart) -> str:
    if part.data is not None:
        if part.media_type is None or hint(part.extra, _PLAIN) is True:
            return part.data
        return f"data:{part.media_type};base64,{part.data}"
    return part.uri or ""


def _encode_media(part: MediaPart) -> JsonObject:
    kind = hint(part.extra, _TYPE)
    if kind is None:
        kind = "input_image" if (part.media_type or "").startswith("image") else "input_file"
    kept = own(part.extra)
    file_id = openai_file_id(part)
    if kind == "input_image":
        core: JsonObject = {"type": "input_image"}
        if file_id is not None:
            core["file_id"] = file_id
        else:
            core["image_url"] = _location(part)
        return merge_fields(core, kept, _IMAGE_DEFAULTS)
    core = {"type": "input_file"}
    if file_id is not None:
        core["file_id"] = file_id
    elif part.data is not None:
        core["file_data"] = _location(part)
    else:
        core["file_url"] = _location(part)
    if part.filename is not None:
        core["filename"] = part.filename
    return merge_fields(core, kept)


def decode_output_part(value: JsonValue, path: str) -> TextPart | RefusalPart:
    """One assistant content part (``output_text`` or ``refusal``; ``input_text`` is normalised)."""
    data = as_object(value, path)
    match data.get("type"):
        case "output_text" | "input_text":
            text = required_str(data, "text", path)
            # ``input_text`` is normalised to a well-formed ``output_text`` (trap 28).
            defaults = _OUTPUT_TEXT_DEFAULTS if data["type"] == "output_text" else None
            fields = split_fields(data, {"type", "text"}, defaults)
            citations = decode_citations(fields)
            tokens = fields.get("logprobs")
            logprobs = () if tokens is None else decode_openai_tokens(tokens, f"{path}.logprobs")
            return TextPart(text=text, citations=citations, logprobs=logprobs, extra=wrap(fields))
        case "refusal":
            text = required_str(data, "refusal", path)
            return RefusalPart(text=text, extra=wrap(split_fields(data, {"type", "refusal"})))
        case _:
            raise DecodeError(f"{path}.type", "assistant content must be output_text or refusal")


def encode_output_part(part: TextPart | RefusalPart) -> JsonObject:
    """An assistant text or refusal part (never ``input_text``: trap 28)."""
    if isinstance(part, RefusalPart):
        return merge_fields({"type": "refusal", "refusal": part.text}, own(part.extra))
    core: JsonObject = {"type": "output_text", "text": part.text}
    kept = own(part.extra)
    if part.citations and "annotations" not in kept:
        core["annotations"] = encode_annotations(part.citations)
    if part.logprobs and "logprobs" not in kept:
        core["logprobs"] = encode_openai_tokens(part.logprobs)
    return merge_fields(core, kept, _OUTPUT_TEXT_DEFAULTS)


def is_plain_text(part: OutputPart) -> bool:
    """A text part with nothing but its text (encodes as a bare string)."""
    if not isinstance(part, TextPart) or part.signature is not None or part.citations:
        return False
    return not (part.extra and own(part.extra))


def decode_tool_output(value: JsonValue, path: str) -> tuple[tuple[OutputPart, ...], str | None]:
    """``function_call_output.output`` (string or list) and the ``~output`` hint it needs."""
    if isinstance(value, str):
        return (TextPart(text=value),), None
    items = as_list(value, path)
    parts = tuple(decode_input_part(item, f"{path}[{i}]") for i, item in enumerate(items))
    default_string = (len(parts) == 1 and is_plain_text(parts[0])) or not parts
    return parts, "list" if default_string else None


def encode_tool_output(parts: tuple[OutputPart, ...], shape: object) -> str | list[JsonValue]:
    """Inverse of :func:`decode_tool_output`: a string unless media or the hint need a list."""
    if shape != "list":
        if not parts:
            return ""
        if len(parts) == 1 and is_plain_text(parts[0]):
            return cast(TextPart, parts[0]).text
        if all(isinstance(part, TextPart | JsonPart) and not own(part.extra) for part in parts):
            return "".join(
                part.text if isinstance(part, TextPart) else _json_text(part.value)
                for part in parts
                if isinstance(part, TextPart | JsonPart)
            )
    return [encode_input_part(part) for part in parts]

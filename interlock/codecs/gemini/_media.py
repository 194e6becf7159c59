"""``inlineData`` / ``fileData`` ⇄ :class:`MediaPart`.

Inline data is kept exactly as received (base64 text, never re-encoded: provider-wire.md
trap 9). A canonical ``data:`` URI is sent as ``inlineData``; any other URI as ``fileData``,
so a URL and base64 data stay apart both ways. ``displayName`` is written only where Gemini
sent it (the Developer API refuses it as an unknown field): another dialect's file name is
not sent (the request encoder warns), but a missing media type is taken from its extension
when it names a common type (Gemini needs ``mimeType`` on inline data).
"""

from __future__ import annotations

from typing import Final

from interlock.codecs._media_kind import concrete
from interlock.codecs.gemini._wire import DIALECT, as_object, as_str, split_fields
from interlock.transcript import JsonObject, JsonValue, MediaPart

BLOB_FIELDS: Final = frozenset({"mimeType", "data", "displayName"})
FILE_FIELDS: Final = frozenset({"mimeType", "fileUri", "displayName"})


def decode_media(value: JsonValue, path: str, inline: bool) -> MediaPart:
    """An ``inlineData`` (``inline``) or ``fileData`` object as a media part; data as received."""
    body, unknown = split_fields(as_object(value, path), BLOB_FIELDS if inline else FILE_FIELDS)
    media_type = body.get("mimeType")
    filename = body.get("displayName")
    marks: JsonObject = {"media": unknown} if unknown else {}
    if filename is not None:
        marks["named"] = True
    if inline:
        data = as_str(body.get("data"), f"{path}.data")
        uri = None
    else:
        uri = as_str(body.get("fileUri"), f"{path}.fileUri")
        data = None
    return MediaPart(
        media_type=None if media_type is None else as_str(media_type, f"{path}.mimeType"),
        data=data,
        uri=uri,
        filename=None if filename is None else as_str(filename, f"{path}.displayName"),
        extra={DIALECT: marks} if marks else {},
    )


def encode_media(part: MediaPart) -> JsonObject | None:
    """``{"inlineData": …}`` or ``{"fileData": …}`` for a media part; ``None`` if it has neither."""
    own = part.extra.get(DIALECT, {})
    media_unknown = own.get("media")
    body: JsonObject = dict(media_unknown) if isinstance(media_unknown, dict) else {}
    if part.data is not None:
        media_type = concrete(part.media_type) or _by_extension(part.filename)
        if media_type is not None:
            body["mimeType"] = media_type
        body["data"] = part.data
        key = "inlineData"
    elif part.uri is not None:
        inline = _data_uri(part.uri)
        if inline is not None:
            body["mimeType"], body["data"] = inline
            key = "inlineData"
        else:
            if concrete(part.media_type) is not None:
                body["mimeType"] = part.media_type
            body["fileUri"] = part.uri
            key = "fileData"
    else:
        return None
    if part.filename is not None and own.get("named"):
        body["displayName"] = part.filename
    fields = own.get("fields")
    wire: JsonObject = dict(fields) if isinstance(fields, dict) else {}
    wire[key] = body
    return wire


_EXTENSIONS: Final = {
    "pdf": "application/pdf",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "txt": "text/plain",
    "csv": "text/csv",
    "md": "text/markdown",
    "html": "text/html",
    "json": "application/json",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "mp4": "video/mp4",
}


def _by_extension(filename: str | None) -> str | None:
    """The media type a file name's extension names, for the common types only."""
    if filename is None or "." not in filename:
        return None
    return _EXTENSIONS.get(filename.rpartition(".")[2].lower())


def dropped_filename(part: MediaPart) -> bool:
    """True when ``part`` has a file name that :func:`encode_media` does not send."""
    return part.filename is not None and not part.extra.get(DIALECT, {}).get("named")


def _data_uri(uri: str) -> tuple[str, str] | None:
    """``data:<type>;base64,<data>`` split into type and data; ``None`` for other URIs."""
    if not uri.startswith("data:"):
        return None
    head, comma, data = uri[5:].partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    return head.removesuffix(";base64") or "application/octet-stream", data

"""inlineData / fileData ⇄ MediaPart."""

from __future__ import annotations

from interlock.codecs.gemini._media import decode_media, encode_media
from interlock.transcript import MediaPart


def test_data_uri_is_sent_as_inline_data() -> None:
    part = MediaPart(uri="data:image/jpeg;base64,/9j/4AAQ")
    assert encode_media(part) == {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}}


def test_other_uris_are_file_data() -> None:
    part = MediaPart(media_type="application/pdf", uri="gs://bucket/a.pdf", filename="a.pdf")
    assert encode_media(part) == {
        "fileData": {
            "mimeType": "application/pdf",
            "fileUri": "gs://bucket/a.pdf",
            "displayName": "a.pdf",
        }
    }


def test_unknown_media_fields_round_trip() -> None:
    wire = {"mimeType": "image/png", "data": "AAAA", "future": 1}
    part = decode_media(wire, "p", inline=True)
    assert encode_media(part) == {"inlineData": wire}


def test_media_without_content_has_no_wire_form() -> None:
    assert encode_media(MediaPart(media_type="image/png")) is None

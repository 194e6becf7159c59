"""inlineData / fileData ⇄ MediaPart."""

from __future__ import annotations

from interlock.codecs import gemini, openai_chat
from interlock.codecs.gemini._media import decode_media, encode_media
from interlock.transcript import MediaPart, Message, Request


def test_data_uri_is_sent_as_inline_data() -> None:
    part = MediaPart(uri="data:image/jpeg;base64,/9j/4AAQ")
    assert encode_media(part) == {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}}


def test_other_uris_are_file_data() -> None:
    part = MediaPart(media_type="application/pdf", uri="gs://bucket/a.pdf")
    assert encode_media(part) == {
        "fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/a.pdf"}
    }


def test_a_display_name_goes_back_only_where_gemini_sent_it() -> None:
    """The Developer API refuses ``displayName`` as an unknown field: a Gemini part keeps it
    (Vertex sends it), another dialect's file name is not sent (and warned about)."""
    wire = {"mimeType": "application/pdf", "fileUri": "gs://bucket/a.pdf", "displayName": "a.pdf"}
    assert encode_media(decode_media(wire, "p", inline=False)) == {"fileData": wire}
    foreign = MediaPart(media_type="application/pdf", uri="gs://bucket/a.pdf", filename="a.pdf")
    assert encode_media(foreign) == {
        "fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/a.pdf"}
    }
    request = Request(model="gemini-3-pro", messages=(Message(role="user", parts=(foreign,)),))
    warnings = gemini.encode_request(request).warnings
    assert [(w.code, w.location) for w in warnings] == [
        ("filename_dropped", "messages[0].parts[0]")
    ]


def test_a_missing_media_type_is_taken_from_a_common_extension() -> None:
    named = MediaPart(data="JVBERi0x", filename="report.PDF")
    assert encode_media(named) == {
        "inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}
    }
    unnamed = MediaPart(data="JVBERi0x", filename="blob.xyz")
    assert encode_media(unnamed) == {"inlineData": {"data": "JVBERi0x"}}


def test_a_url_and_base64_stay_apart_from_chat_to_gemini() -> None:
    """Chat ``file.file_data`` holding a URL (seen in recorded traffic) is a URL, never data."""
    chat = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"file_data": "https://example.com/b.pdf"}},
                    {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0x"}},
                ],
            }
        ],
    }
    request = openai_chat.decode_request(chat)
    assert openai_chat.encode_request(request).payload == chat
    contents = gemini.encode_request(request).payload["contents"]
    assert contents == [
        {
            "role": "user",
            "parts": [
                {"fileData": {"fileUri": "https://example.com/b.pdf"}},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
            ],
        }
    ]


def test_unknown_media_fields_round_trip() -> None:
    wire = {"mimeType": "image/png", "data": "AAAA", "future": 1}
    part = decode_media(wire, "p", inline=True)
    assert encode_media(part) == {"inlineData": wire}


def test_media_without_content_has_no_wire_form() -> None:
    assert encode_media(MediaPart(media_type="image/png")) is None

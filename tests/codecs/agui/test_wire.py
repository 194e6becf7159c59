"""Media and tool output between AG-UI content parts and transcript parts."""

from __future__ import annotations

import pytest
from ag_ui.core import ContentPart
from pydantic import TypeAdapter

from interlock.codecs.agui._wire import (
    content_part_to_part,
    media_to_content_part,
    output_to_content,
)
from interlock.transcript import JsonObject, JsonPart, MediaPart, TextPart

PART = TypeAdapter(ContentPart)

ROUND_TRIPS: list[JsonObject] = [
    {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
    {
        "type": "audio",
        "source": {"type": "url", "value": "https://x/a.mp3", "mimeType": "audio/mpeg"},
    },
    {"type": "video", "source": {"type": "url", "value": "https://x/v.mp4"}},
    {
        "type": "document",
        "id": "p1",
        "source": {
            "type": "file",
            "value": "file-1",
            "provider": "openai",
            "mimeType": "application/pdf",
        },
        "metadata": {"filename": "r.pdf", "pages": 3},
    },
    {"type": "document", "source": {"type": "url", "value": "https://x/doc"}},
]


@pytest.mark.parametrize("wire", ROUND_TRIPS, ids=lambda wire: f"{wire['type']}")
def test_media_parts_round_trip(wire: JsonObject) -> None:
    part = content_part_to_part(PART.validate_python(wire))
    assert isinstance(part, MediaPart)
    assert media_to_content_part(part) == wire


def test_filename_comes_from_metadata() -> None:
    part = content_part_to_part(PART.validate_python(ROUND_TRIPS[3]))
    assert isinstance(part, MediaPart) and part.filename == "r.pdf"


def test_media_kind_is_inferred_from_the_mime_type_when_not_recorded() -> None:
    assert media_to_content_part(MediaPart(media_type="audio/wav", data="AA"))["type"] == "audio"
    assert media_to_content_part(MediaPart(uri="https://x/y"))["type"] == "document"
    inline = media_to_content_part(MediaPart(data="AA"))
    assert inline["source"] == {
        "type": "data",
        "value": "AA",
        "mimeType": "application/octet-stream",
    }
    PART.validate_python(inline)


def test_text_parts_keep_id_and_metadata() -> None:
    part = content_part_to_part(PART.validate_python({"type": "text", "text": "hi", "id": "t1"}))
    assert part == TextPart(text="hi", extra={"agui": {"id": "t1"}})


def test_text_only_output_is_one_string_verbatim() -> None:
    output = (TextPart(text='{"a": 1}'), JsonPart(value={"b": [1, 2]}))
    assert output_to_content(output) == '{"a": 1}{"b":[1,2]}'
    assert output_to_content(()) == ""

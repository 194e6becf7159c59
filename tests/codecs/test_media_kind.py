"""An image URL without a media type keeps its kind across dialects (``image/*``).

The real payload: ruby_llm's recorded xAI Responses request whose ``input_image`` is
``https://httpbin.org/image/jpeg`` (no extension). Every decoder that is told "image" but
not the type records ``image/*``; every encoder picks its image form from it and never
writes the wildcard as a media type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import ImagePart, UrlSource

from interlock.codecs._media_kind import concrete, wildcard
from interlock.codecs.agui._wire import content_part_to_part, media_to_content_part
from interlock.codecs.registry import DialectName, wire_codec
from interlock.transcript import MediaPart, ReplayPolicy, Request

RECORDED = (
    Path(__file__).resolve().parents[2]
    / "conformance/corpus/payloads/xai"
    / "crmne+ruby_llm__vcr_cassettes__chat_vision_models_xai_grok-4-1-fast-non-reasoning"
    "_can_understand_remote_images_witho.json"
)
IMAGE = "https://httpbin.org/image/jpeg"


def _recorded_request() -> dict[str, Any]:
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    return next(p["wire"] for p in document["payloads"] if p["kind"] == "request")


def _media(request: Request) -> MediaPart:
    part = request.messages[0].parts[1]
    assert isinstance(part, MediaPart)
    return part


def _encoded(dialect: DialectName, request: Request) -> tuple[str, list[str]]:
    sent = wire_codec(dialect).encode_request(request, ReplayPolicy())
    return json.dumps(sent.payload), [warning.code for warning in sent.warnings]


def test_the_recorded_input_image_decodes_as_an_image_of_unknown_type() -> None:
    responses = wire_codec("openai-responses")
    request = responses.decode_request(_recorded_request())
    assert (_media(request).media_type, _media(request).uri) == ("image/*", IMAGE)
    assert responses.encode_request(request, ReplayPolicy()).payload == _recorded_request()


def test_chat_sends_it_as_an_image_url() -> None:
    request = wire_codec("openai-responses").decode_request(_recorded_request())
    sent = wire_codec("openai-chat").encode_request(request, ReplayPolicy())
    content: Any = sent.payload["messages"]
    content = content[0]["content"]
    assert {"type": "image_url", "image_url": {"url": IMAGE}} in content
    assert [w.location for w in sent.warnings] == ["options.include_reasoning"]  # not media


def test_anthropic_sends_it_as_an_image_block_without_a_media_type_warning() -> None:
    request = wire_codec("openai-responses").decode_request(_recorded_request())
    payload, warnings = _encoded("anthropic", request)
    assert '{"type": "image", "source": {"type": "url", "url": "' + IMAGE + '"}}' in payload
    assert "media_type_dropped" not in warnings


def test_gemini_leaves_the_wildcard_out_of_mime_type() -> None:
    request = wire_codec("openai-responses").decode_request(_recorded_request())
    payload, _ = _encoded("gemini", request)
    assert '{"fileData": {"fileUri": "' + IMAGE + '"}}' in payload
    assert "image/*" not in payload


@pytest.mark.parametrize("kind", ["image_url", "input_image", "anthropic", "agui"])
def test_every_dialect_that_says_image_decodes_an_untyped_url_as_image_wildcard(
    kind: str,
) -> None:
    if kind == "image_url":
        wire: Any = {"type": "image_url", "image_url": {"url": IMAGE}}
        decoded = wire_codec("openai-chat").decode_request(
            {"model": "m", "messages": [{"role": "user", "content": [wire]}]}
        )
    elif kind == "input_image":
        wire = {"type": "input_image", "image_url": IMAGE}
        decoded = wire_codec("openai-responses").decode_request(
            {"model": "m", "input": [{"role": "user", "content": [wire]}]}
        )
    elif kind == "anthropic":
        wire = {"type": "image", "source": {"type": "url", "url": IMAGE}}
        decoded = wire_codec("anthropic").decode_request(
            {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [wire]}]}
        )
    else:
        part = content_part_to_part(ImagePart(source=UrlSource(value=IMAGE)))
        assert isinstance(part, MediaPart)
        assert (part.media_type, part.uri) == (wildcard("image"), IMAGE)
        again = media_to_content_part(part)
        assert again["source"] == {"type": "url", "value": IMAGE}  # no wildcard mimeType
        return
    media = next(p for m in decoded.messages for p in m.parts if isinstance(p, MediaPart))
    assert (media.media_type, media.uri) == (wildcard("image"), IMAGE)


def test_concrete_keeps_real_types_and_drops_wildcards() -> None:
    assert concrete("image/png") == "image/png"
    assert concrete("image/*") is None
    assert concrete(None) is None

"""Media another service cannot use is refused (strict) or dropped with a warning (degrade),
identically by every non-Gemini request encoder: ``gs://`` objects and Gemini Files API
files (only Gemini fetches them: ``media_unreachable``), and video or audio sent to
Anthropic, which has no such input (``media_unsupported``). Gemini gets them as they came."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs.gemini import decode_request as decode_gemini
from interlock.codecs.registry import DialectName, wire_codec
from interlock.transcript import (
    LossyHistoryError,
    MediaPart,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

GS = "gs://cloud-samples-data/video/animals.mp4"
FILES_API = "https://generativelanguage.googleapis.com/v1beta/files/abc123"
OTHERS: list[DialectName] = ["openai-chat", "openai-responses", "anthropic"]


def _request(part: MediaPart) -> Request:
    question = Message(role="user", parts=(TextPart(text="What is in it?"), part))
    return Request(model="m", messages=(question,))


@pytest.mark.parametrize("uri", [GS, FILES_API], ids=["gs", "files-api"])
@pytest.mark.parametrize("media_type", ["image/png", "application/pdf", "video/mp4"])
@pytest.mark.parametrize("dialect", OTHERS)
def test_a_google_only_reference_is_refused_or_dropped_with_a_warning(
    dialect: DialectName, media_type: str, uri: str
) -> None:
    codec = wire_codec(dialect)
    request = _request(MediaPart(media_type=media_type, uri=uri))
    with pytest.raises(LossyHistoryError) as refused:
        codec.encode_request(request, ReplayPolicy())
    assert refused.value.code == "media_unreachable"
    assert refused.value.location == "messages[0].parts[1]"
    assert "only Gemini can fetch it" in refused.value.reason
    sent = codec.encode_request(request, ReplayPolicy(mode="degrade"))
    assert [(w.code, w.location) for w in sent.warnings] == [
        ("media_unreachable", "messages[0].parts[1]")
    ]
    assert uri not in str(sent.payload)
    assert "What is in it?" in str(sent.payload)


@pytest.mark.parametrize("dialect", ["openai-responses", "anthropic"])
def test_a_google_only_reference_in_a_tool_result_is_refused_or_dropped(
    dialect: DialectName,
) -> None:
    result = ToolResultPart(
        call_id="c1",
        name="fetch",
        output=(TextPart(text="here"), MediaPart(media_type="image/png", uri=GS)),
    )
    call_message = Message(
        role="assistant", parts=(ToolCallPart(call_id="c1", name="fetch", arguments="{}"),)
    )
    request = Request(
        model="m",
        tools=(ToolSpec(name="fetch", parameters={"type": "object", "properties": {}}),),
        messages=(
            Message(role="user", parts=(TextPart(text="go"),)),
            call_message,
            Message(role="tool", parts=(result,)),
        ),
    )
    codec = wire_codec(dialect)
    with pytest.raises(LossyHistoryError) as refused:
        codec.encode_request(request, ReplayPolicy())
    assert refused.value.location == "messages[2].parts[0].output[1]"
    sent = codec.encode_request(request, ReplayPolicy(mode="degrade"))
    assert [w.code for w in sent.warnings] == ["media_unreachable"]
    assert GS not in str(sent.payload) and "here" in str(sent.payload)


def test_gemini_gets_the_reference_as_it_came() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [{"fileData": {"mimeType": "video/mp4", "fileUri": GS}}],
            }
        ]
    }
    codec = wire_codec("gemini")
    sent = codec.encode_request(decode_gemini(body, model="gemini-2.5-flash"), ReplayPolicy())
    assert sent.payload["contents"] == body["contents"]
    assert sent.warnings == ()


def test_a_public_url_is_not_a_google_only_reference() -> None:
    public = "https://storage.googleapis.com/cloud-samples-data/image.png"
    sent = wire_codec("openai-chat").encode_request(
        _request(MediaPart(media_type="image/png", uri=public)), ReplayPolicy()
    )
    assert public in str(sent.payload) and sent.warnings == ()


@pytest.mark.parametrize("media_type", ["video/mp4", "audio/wav"])
def test_anthropic_refuses_video_and_audio_it_has_no_input_for(media_type: str) -> None:
    codec = wire_codec("anthropic")
    for part in (
        MediaPart(media_type=media_type, data="AAAA"),
        MediaPart(media_type=media_type, uri="https://example.com/clip"),
    ):
        request = _request(part)
        with pytest.raises(LossyHistoryError) as refused:
            codec.encode_request(request, ReplayPolicy())
        assert refused.value.code == "media_unsupported"
        assert refused.value.location == "messages[0].parts[1]"
        sent = codec.encode_request(request, ReplayPolicy(mode="degrade"))
        assert [w.code for w in sent.warnings] == ["media_unsupported"]
        assert "document" not in str(sent.payload)


def test_anthropic_still_sends_images_and_pdfs() -> None:
    codec = wire_codec("anthropic")
    for media_type, block in (("image/png", "image"), ("application/pdf", "document")):
        sent = codec.encode_request(
            _request(MediaPart(media_type=media_type, data="AAAA")), ReplayPolicy()
        )
        payload: Any = sent.payload
        assert payload["messages"][0]["content"][1]["type"] == block

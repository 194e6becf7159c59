"""A file uploaded to OpenAI, referenced by id, is one canonical thing in both OpenAI dialects.

Chat ``{"type": "file", "file": {"file_id": …}}`` and Responses ``input_file.file_id`` decode
to ``MediaPart(uri="openai-file:<id>")`` and translate into each other; an image by file id
(Responses ``input_image.file_id``, three recorded crewAI requests) has no Chat form (Chat takes
images as ``image_url`` only, and files — PDFs — by id), and neither Gemini nor Anthropic can
read an OpenAI file: those are refused under strict and dropped with a warning under degrade.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.codecs.registry import wire_codec
from interlock.transcript import LossyHistoryError, MediaPart, ReplayPolicy

CORPUS = Path(__file__).resolve().parents[2] / "conformance/corpus/payloads/openai"
RECORDED = sorted(
    CORPUS.glob("crewAIInc+crewAI__*FileUpload*"),
)
STRICT = ReplayPolicy(mode="strict")
DEGRADE = ReplayPolicy(mode="degrade")


def _recorded_requests() -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    for path in RECORDED:
        document = json.loads(path.read_text(encoding="utf-8"))
        for payload in document["payloads"]:
            wire = payload["wire"]
            if payload["kind"] == "request" and "file_id" in json.dumps(wire):
                requests.append(wire)
    return requests


def _responses_file_request() -> dict[str, Any]:
    content = [
        {"type": "input_text", "text": "Summarize this report."},
        {"type": "input_file", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL", "filename": "q3.pdf"},
    ]
    return {"model": "gpt-4.1", "input": [{"role": "user", "content": content}]}


def test_three_recorded_requests_hold_images_by_file_id() -> None:
    requests = _recorded_requests()
    assert len(requests) == 3
    for wire in requests:
        decoded = wire_codec("openai-responses").decode_request(wire)
        media = [p for m in decoded.messages for p in m.parts if isinstance(p, MediaPart)]
        assert media and all((p.uri or "").startswith("openai-file:file-") for p in media)
        assert wire_codec("openai-responses").encode_request(decoded, STRICT).payload == wire


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("openai-chat", "media_unsupported"),
        ("gemini", "media_unreachable"),
        ("anthropic", "media_unreachable"),
    ],
)
def test_an_image_by_file_id_is_refused_where_it_cannot_be_read(target: Any, code: str) -> None:
    for wire in _recorded_requests():
        decoded = wire_codec("openai-responses").decode_request(wire)
        codec = wire_codec(target)
        with pytest.raises(LossyHistoryError) as refused:
            codec.encode_request(decoded, STRICT)
        assert refused.value.code == code
        degraded = codec.encode_request(decoded, DEGRADE)
        assert code in [warning.code for warning in degraded.warnings]
        assert "file-" not in json.dumps(degraded.payload)


def test_a_responses_file_by_id_becomes_a_chat_file_part_and_back() -> None:
    wire = _responses_file_request()
    decoded = wire_codec("openai-responses").decode_request(wire)
    chat = wire_codec("openai-chat").encode_request(decoded, STRICT)
    assert chat.warnings == ()
    part = chat.payload["messages"][0]["content"][1]  # type: ignore[index]  # JSON from the codec
    assert part == {
        "type": "file",
        "file": {"file_id": wire["input"][0]["content"][1]["file_id"], "filename": "q3.pdf"},
    }
    again = wire_codec("openai-chat").decode_request(chat.payload)
    back = wire_codec("openai-responses").encode_request(again, STRICT).payload
    assert back["input"][0]["content"] == wire["input"][0]["content"]  # type: ignore[index]


@pytest.mark.parametrize("target", ["gemini", "anthropic"])
def test_no_other_provider_is_sent_an_openai_file_id(target: Any) -> None:
    decoded = wire_codec("openai-chat").decode_request(
        {
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Summarize."},
                        {"type": "file", "file": {"file_id": "file-abc"}},
                    ],
                }
            ],
        }
    )
    with pytest.raises(LossyHistoryError) as refused:
        wire_codec(target).encode_request(decoded, STRICT)
    assert refused.value.code == "media_unreachable"
    assert "file-abc" in refused.value.reason

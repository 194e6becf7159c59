"""A refused prompt is a content-filter finish in every dialect, never an empty success."""

from __future__ import annotations

import json

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.codecs._sse import SseEvent
from interlock.transcript import fold_updates

BLOCKED = {
    "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
    "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
    "modelVersion": "gemini-2.5-flash",
    "responseId": "r1",
}


def test_a_gemini_prompt_block_decodes_as_a_content_filter_finish_and_back_exactly() -> None:
    response = gemini.decode_response(BLOCKED)
    assert response.finish_reason == "content_filter"
    assert response.native_finish_reason == "PROHIBITED_CONTENT"
    assert gemini.encode_response(response) == BLOCKED


def test_a_streamed_prompt_block_finishes_the_stream_as_content_filter() -> None:
    decoder = gemini.StreamDecoder()
    updates = decoder.feed(SseEvent(data=json.dumps(BLOCKED))) + decoder.finish()
    response = fold_updates(updates)
    assert response.finish_reason == "content_filter"
    assert response.native_finish_reason == "PROHIBITED_CONTENT"


def test_other_dialects_are_told_the_prompt_was_filtered() -> None:
    response = gemini.decode_response(BLOCKED)
    chat = openai_chat.encode_response(response)
    assert chat["choices"][0]["finish_reason"] == "content_filter"
    responses = openai_responses.encode_response(response)
    assert responses["status"] == "incomplete"
    assert responses["incomplete_details"] == {"reason": "content_filter"}


def test_a_finished_response_without_a_reason_is_never_encoded_in_progress() -> None:
    response = gemini.decode_response({"candidates": [{"content": {"parts": [{"text": "hi"}]}}]})
    assert response.finish_reason is None
    assert openai_responses.encode_response(response)["status"] == "completed"

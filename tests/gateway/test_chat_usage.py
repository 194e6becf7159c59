"""Asking a relayed Chat stream for usage the client did not ask for, and hiding it."""

from __future__ import annotations

import json

from interlock.codecs import openai_chat
from interlock.codecs._sse import SseEvent
from interlock.gateway.chat_usage import ask_for_usage, is_usage_chunk, without_usage_chunks
from interlock.transcript import Request

BODY = b' {"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}'


def _request(body: bytes) -> Request:
    return openai_chat.wire_codec("openai-chat").decode_request(json.loads(body))


def test_a_stream_without_stream_options_asks_for_usage_and_keeps_the_rest() -> None:
    body, hide = ask_for_usage(BODY, _request(BODY), openai_chat.DIALECT)
    assert hide
    document = json.loads(body)
    assert document["stream_options"] == {"include_usage": True}
    assert {k: v for k, v in document.items() if k != "stream_options"} == json.loads(BODY)


def test_a_client_that_wrote_stream_options_or_did_not_stream_is_left_alone() -> None:
    own = BODY.replace(b'"stream":true', b'"stream":true,"stream_options":{"include_usage":false}')
    plain = BODY.replace(b'"stream":true', b'"stream":false')
    for body in (own, plain):
        assert ask_for_usage(body, _request(body), openai_chat.DIALECT) == (body, False)
    assert ask_for_usage(BODY, _request(BODY), "gemini") == (BODY, False)


def test_only_the_usage_chunk_is_taken_out() -> None:
    usage = SseEvent('{"id":"c","choices": [],"usage":{"prompt_tokens":3}}')
    text = SseEvent('{"id":"c","choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}')
    empty_no_usage = SseEvent('{"id":"c","choices":[],"usage":null}')
    done = SseEvent("[DONE]")
    assert is_usage_chunk(usage)
    assert not any(is_usage_chunk(e) for e in (text, empty_no_usage, done, SseEvent("{")))
    assert without_usage_chunks([text, usage, done]) == [text, done]
    assert without_usage_chunks([text, done]) is None

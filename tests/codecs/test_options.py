"""Candidates and log-probability settings are checked at decode as the services check them."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.transcript import DecodeError

_CHAT: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
_GEMINI: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _chat(**fields: Any) -> None:
    openai_chat.decode_request({**_CHAT, **fields})


def _responses(**fields: Any) -> None:
    openai_responses.decode_request({"model": "m", "input": "hi", **fields})


def _gemini(**config: Any) -> None:
    gemini.decode_request({**_GEMINI, "generationConfig": config}, model="m")


@pytest.mark.parametrize(
    ("decode", "fields", "path"),
    [
        (_chat, {"n": 0}, "n"),
        (_chat, {"logprobs": True, "top_logprobs": 25}, "top_logprobs"),
        (_chat, {"top_logprobs": 2}, "top_logprobs"),
        (_chat, {"logprobs": False, "top_logprobs": 2}, "top_logprobs"),
        (_responses, {"top_logprobs": 21}, "top_logprobs"),
        (_responses, {"top_logprobs": -1}, "top_logprobs"),
        (_gemini, {"candidateCount": 0}, "generationConfig.candidateCount"),
        (_gemini, {"responseLogprobs": True, "logprobs": 25}, "generationConfig.logprobs"),
    ],
)
def test_out_of_range_settings_are_refused_at_their_wire_name(
    decode: Any, fields: dict[str, Any], path: str
) -> None:
    with pytest.raises(DecodeError) as raised:
        decode(**fields)
    assert raised.value.path == path


@pytest.mark.parametrize(
    ("decode", "fields"),
    [
        (_chat, {"n": 3, "logprobs": True, "top_logprobs": 20}),
        (_chat, {"logprobs": False, "top_logprobs": 0}),
        (_responses, {"top_logprobs": 0}),
        (_gemini, {"candidateCount": 2, "responseLogprobs": True, "logprobs": 0}),
    ],
)
def test_settings_in_range_are_decoded(decode: Any, fields: dict[str, Any]) -> None:
    decode(**fields)

"""Token log-probabilities and several candidates in every codec, whole and streamed.

Each dialect's answer, in the shape its service sends (Chat ``choices[i].logprobs.content``,
Responses ``output_text.logprobs``, Gemini ``candidates[i].logprobsResult``), decodes to
text parts with their tokens and to alternatives; it encodes back exactly; streamed by its
encoder and decoded by its decoder, it folds to what the whole answer decodes to; and
translated to every other dialect, the tokens (and, where the dialect has several
candidates, the alternatives) arrive.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.codecs import gemini as gemini_codec
from interlock.codecs import openai_chat, openai_responses
from interlock.codecs._sse import SseEvent
from interlock.transcript import (
    Alternative,
    CandidateUpdate,
    DecodeError,
    Message,
    PartDelta,
    Response,
    TextPart,
    fold_updates,
    response_to_updates,
)

CHAT: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi there", "refusal": None},
            "logprobs": {
                "content": [
                    {
                        "token": "Hi",
                        "logprob": -0.01,
                        "bytes": [72, 105],
                        "top_logprobs": [
                            {"token": "Hi", "logprob": -0.01, "bytes": [72, 105]},
                            {"token": "Hello", "logprob": -4.6, "bytes": [72, 101, 108, 108, 111]},
                        ],
                    },
                    {
                        "token": " there",
                        "logprob": -0.3,
                        "bytes": [32, 116, 104, 101, 114, 101],
                        "top_logprobs": [
                            {
                                "token": " there",
                                "logprob": -0.3,
                                "bytes": [32, 116, 104, 101, 114, 101],
                            },
                            {"token": "!", "logprob": -1.5, "bytes": [33]},
                        ],
                    },
                ],
                "refusal": None,
            },
            "finish_reason": "stop",
        },
        {
            "index": 1,
            "message": {"role": "assistant", "content": "Hello", "refusal": None},
            "logprobs": {
                "content": [
                    {
                        "token": "Hello",
                        "logprob": -4.6,
                        "bytes": [72, 101, 108, 108, 111],
                        "top_logprobs": [
                            {"token": "Hi", "logprob": -0.01, "bytes": [72, 105]},
                            {"token": "Hello", "logprob": -4.6, "bytes": [72, 101, 108, 108, 111]},
                        ],
                    }
                ],
                "refusal": None,
            },
            "finish_reason": "length",
        },
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}

RESPONSES: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "model": "gpt-4o-mini",
    "output": [
        {
            "id": "msg_1",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "Hi there",
                    "annotations": [],
                    "logprobs": CHAT["choices"][0]["logprobs"]["content"],
                }
            ],
        }
    ],
    "usage": {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 2,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 7,
    },
}

GEMINI: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Hi there"}], "role": "model"},
            "finishReason": "STOP",
            "avgLogprobs": -0.155,
            "logprobsResult": {
                "topCandidates": [
                    {
                        "candidates": [
                            {"token": "Hi", "tokenId": 1001, "logProbability": -0.01},
                            {"token": "Hello", "tokenId": 1002, "logProbability": -4.6},
                        ]
                    },
                    {
                        "candidates": [
                            {"token": " there", "tokenId": 1003, "logProbability": -0.3},
                            {"token": "!", "tokenId": 1004, "logProbability": -1.5},
                        ]
                    },
                ],
                "chosenCandidates": [
                    {"token": "Hi", "tokenId": 1001, "logProbability": -0.01},
                    {"token": " there", "tokenId": 1003, "logProbability": -0.3},
                ],
            },
            "index": 0,
        },
        {
            "content": {"parts": [{"text": "Hello"}], "role": "model"},
            "finishReason": "MAX_TOKENS",
            "avgLogprobs": -4.6,
            "logprobsResult": {
                "topCandidates": [
                    {
                        "candidates": [
                            {"token": "Hi", "tokenId": 1001, "logProbability": -0.01},
                            {"token": "Hello", "tokenId": 1002, "logProbability": -4.6},
                        ]
                    }
                ],
                "chosenCandidates": [{"token": "Hello", "tokenId": 1002, "logProbability": -4.6}],
            },
            "index": 1,
        },
    ],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
    "modelVersion": "gemini-2.0-flash",
    "responseId": "r-1",
}

CODECS: dict[str, Any] = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "gemini": gemini_codec,
}
ANSWERS = {"openai_chat": CHAT, "openai_responses": RESPONSES, "gemini": GEMINI}
SEVERAL = {"openai_chat", "gemini"}
"""The dialects whose answers hold several candidates."""


def _tokens(response: Response) -> list[tuple[str, float, list[tuple[str, float]]]]:
    return [
        (token.token, token.logprob, [(top.token, top.logprob) for top in token.top])
        for part in response.message.parts
        if isinstance(part, TextPart)
        for token in part.logprobs
    ]


def _alternatives(response: Response) -> list[tuple[str, str | None]]:
    return [(a.message.text, a.finish_reason) for a in response.alternatives]


def _streamed(codec: Any, response: Response) -> Response:
    encoder = codec.StreamEncoder()
    events = [event for update in response_to_updates(response) for event in encoder.encode(update)]
    events += encoder.finish()
    decoder = codec.StreamDecoder()
    updates = [update for event in events for update in decoder.feed(event)]
    return fold_updates([*updates, *decoder.finish()])


@pytest.mark.parametrize("dialect", sorted(ANSWERS))
def test_an_answer_decodes_to_tokens_and_alternatives_and_encodes_back_exactly(
    dialect: str,
) -> None:
    codec, wire = CODECS[dialect], ANSWERS[dialect]
    decoded = codec.decode_response(wire)
    assert _tokens(decoded) == [
        ("Hi", -0.01, [("Hi", -0.01), ("Hello", -4.6)]),
        (" there", -0.3, [(" there", -0.3), ("!", -1.5)]),
    ]
    expected = [("Hello", "length")] if dialect in SEVERAL else []
    assert _alternatives(decoded) == expected
    if dialect in SEVERAL:
        assert [t.token for t in decoded.alternatives[0].message.parts[0].logprobs] == ["Hello"]  # type: ignore[union-attr]  # a text part
    assert codec.encode_response(decoded) == wire


@pytest.mark.parametrize("dialect", sorted(ANSWERS))
def test_a_streamed_answer_folds_to_the_whole_one(dialect: str) -> None:
    codec = CODECS[dialect]
    decoded = codec.decode_response(ANSWERS[dialect])
    streamed = _streamed(codec, decoded)
    assert _tokens(streamed) == _tokens(decoded)
    assert _alternatives(streamed) == _alternatives(decoded)
    assert [a.message.parts for a in streamed.alternatives] == [
        a.message.parts for a in decoded.alternatives
    ]


@pytest.mark.parametrize("target", sorted(CODECS))
@pytest.mark.parametrize("source", sorted(ANSWERS))
def test_tokens_and_alternatives_cross_to_every_dialect_whole_and_streamed(
    source: str, target: str
) -> None:
    decoded = CODECS[source].decode_response(ANSWERS[source])
    codec = CODECS[target]
    whole = codec.decode_response(codec.encode_response(decoded))
    streamed = _streamed(codec, decoded)
    for arrived in (whole, streamed):
        assert _tokens(arrived) == _tokens(decoded)
        kept = _alternatives(decoded) if target in SEVERAL else []
        assert _alternatives(arrived) == kept


def test_chat_stream_chunks_carry_each_choice_index_and_its_logprobs() -> None:
    decoded = openai_chat.decode_response(CHAT)
    encoder = openai_chat.StreamEncoder()
    events = [e for u in response_to_updates(decoded) for e in encoder.encode(u)]
    chunks = [json.loads(e.data) for e in events]
    by_index: dict[int, list[str]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            logprobs = choice.get("logprobs") or {}
            for token in logprobs.get("content") or []:
                by_index.setdefault(choice["index"], []).append(token["token"])
    assert by_index == {0: ["Hi", " there"], 1: ["Hello"]}


def test_responses_text_deltas_carry_their_tokens() -> None:
    """The ``response.output_text.delta`` events carry the tokens (without ``bytes``, as the
    service sends them), and the decoder puts them on the deltas, before the snapshot."""
    decoded = openai_responses.decode_response(RESPONSES)
    encoder = openai_responses.StreamEncoder()
    events = [e for u in response_to_updates(decoded) for e in encoder.encode(u)]
    deltas = [e for e in events if e.event == "response.output_text.delta"]
    assert [t["token"] for e in deltas for t in json.loads(e.data)["logprobs"]] == ["Hi", " there"]
    assert all("bytes" not in t for e in deltas for t in json.loads(e.data)["logprobs"])
    decoder = openai_responses.StreamDecoder()
    before_snapshot = events[: events.index(deltas[-1]) + 1]
    updates = [u for e in before_snapshot for u in decoder.feed(e)]
    tokens = [t for u in updates if isinstance(u, PartDelta) for t in u.logprobs]
    assert [(t.token, t.logprob, t.top[1].token) for t in tokens] == [
        ("Hi", -0.01, "Hello"),
        (" there", -0.3, "!"),
    ]


@pytest.mark.parametrize(
    ("dialect", "broken", "path"),
    [
        (
            "openai_chat",
            {**CHAT, "choices": [{**CHAT["choices"][0], "logprobs": {"content": [{"token": 1}]}}]},
            "choices[0].logprobs.content[0].token",
        ),
        (
            "gemini",
            {
                **GEMINI,
                "candidates": [
                    {
                        **GEMINI["candidates"][0],
                        "logprobsResult": {
                            "chosenCandidates": [{"token": "a", "logProbability": "x"}]
                        },
                    }
                ],
            },
            "candidates[0].logprobsResult.chosenCandidates[0].logProbability",
        ),
    ],
)
def test_malformed_logprobs_are_refused_naming_the_path(
    dialect: str, broken: dict[str, Any], path: str
) -> None:
    with pytest.raises(DecodeError) as raised:
        CODECS[dialect].decode_response(broken)
    assert raised.value.path == path


def test_a_gemini_stream_routes_each_candidate_by_index() -> None:
    decoder = gemini_codec.StreamDecoder()
    chunks = [
        {
            "candidates": [
                {"content": {"parts": [{"text": "A"}], "role": "model"}, "index": 0},
                {"content": {"parts": [{"text": "B"}], "role": "model"}, "index": 1},
            ]
        },
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "b"}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 1,
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "a"}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ]
        },
    ]
    updates = [u for c in chunks for u in decoder.feed(SseEvent(data=json.dumps(c)))]
    assert any(isinstance(u, CandidateUpdate) and u.candidate == 1 for u in updates)
    folded = fold_updates([*updates, *decoder.finish()])
    assert folded.message.text == "Aa"
    assert [a.message.text for a in folded.alternatives] == ["Bb"]


def test_an_alternative_from_another_dialect_gets_its_index() -> None:
    response = Response(
        message=Message(role="assistant", parts=(TextPart(text="a"),)),
        finish_reason="stop",
        alternatives=(
            Alternative(
                message=Message(role="assistant", parts=(TextPart(text="b"),)),
                finish_reason="stop",
            ),
        ),
    )
    chat = openai_chat.encode_response(response)
    assert [c["index"] for c in chat["choices"]] == [0, 1]  # type: ignore[index, union-attr]  # a JSON list of objects
    wire = gemini_codec.encode_response(response)
    assert [c["index"] for c in wire["candidates"]] == [0, 1]  # type: ignore[index, union-attr]  # a JSON list of objects

"""contents[] decoding: call/result pairing without ids (trap 18) and content boundaries."""

from __future__ import annotations

import copy

import pytest

from interlock.codecs import gemini
from interlock.transcript import JsonObject, ToolCallPart, ToolResultPart


def call(name: str, city: str, call_id: str | None = None) -> JsonObject:
    body: JsonObject = {"name": name, "args": {"city": city}}
    if call_id is not None:
        body["id"] = call_id
    return {"functionCall": body}


def answer(name: str, value: str, call_id: str | None = None) -> JsonObject:
    body: JsonObject = {"name": name, "response": {"output": value}}
    if call_id is not None:
        body["id"] = call_id
    return {"functionResponse": body}


def pairs(payload: JsonObject) -> list[tuple[str, str]]:
    """(call arguments, result text) for every result, paired through call ids."""
    messages = gemini.decode_request(payload).messages
    calls = {p.call_id: p for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
    return [
        (calls[p.call_id].arguments, p.text)
        for m in messages
        for p in m.parts
        if isinstance(p, ToolResultPart)
    ]


def test_parallel_same_name_calls_without_ids_pair_by_order() -> None:
    payload: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "two cities"}]},
            {
                "role": "model",
                "parts": [
                    call("get_weather", "Paris"),
                    call("get_time", "Rome"),
                    call("get_weather", "Oslo"),
                ],
            },
            {
                "role": "user",
                "parts": [
                    answer("get_weather", "P"),
                    answer("get_time", "R"),
                    answer("get_weather", "O"),
                ],
            },
        ]
    }
    assert pairs(payload) == [
        ('{"city":"Paris"}', "P"),
        ('{"city":"Rome"}', "R"),
        ('{"city":"Oslo"}', "O"),
    ]
    assert (
        gemini.encode_request(gemini.decode_request(payload), require_signatures=False).payload
        == payload
    )


def test_permuted_results_with_ids_pair_by_id() -> None:
    payload: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "two cities"}]},
            {
                "role": "model",
                "parts": [call("get_weather", "Paris", "a"), call("get_weather", "Oslo", "b")],
            },
            {
                "role": "user",
                "parts": [answer("get_weather", "O", "b"), answer("get_weather", "P", "a")],
            },
        ]
    }
    assert pairs(payload) == [('{"city":"Oslo"}', "O"), ('{"city":"Paris"}', "P")]


def test_results_without_ids_pair_with_calls_that_have_ids_and_omit_them_again() -> None:
    payload: JsonObject = {
        "contents": [
            {"role": "user", "parts": [{"text": "x"}]},
            {"role": "model", "parts": [call("f", "A", "id-1"), call("f", "B", "id-2")]},
            {"role": "user", "parts": [answer("f", "a"), answer("f", "b")]},
        ]
    }
    assert pairs(payload) == [('{"city":"A"}', "a"), ('{"city":"B"}', "b")]
    assert (
        gemini.encode_request(gemini.decode_request(payload), require_signatures=False).payload
        == payload
    )


@pytest.mark.parametrize(
    "contents",
    [
        # text after function responses in the same user content
        [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [call("f", "A")]},
            {"role": "user", "parts": [answer("f", "a"), {"text": "and now?"}]},
        ],
        # text before function responses in the same user content
        [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [call("f", "A")]},
            {"role": "user", "parts": [{"text": "note"}, answer("f", "a")]},
        ],
        # two separate function-response contents in a row (invalid for the service, still exact)
        [
            {"role": "model", "parts": [call("f", "A"), call("f", "B")]},
            {"role": "user", "parts": [answer("f", "a")]},
            {"role": "user", "parts": [answer("f", "b")]},
        ],
        # legacy role "function", a content without role, an empty content, unknown content fields
        [
            {"parts": [{"text": "no role"}]},
            {"role": "model", "parts": [call("f", "A")]},
            {"role": "function", "parts": [answer("f", "a")]},
            {"role": "user", "parts": []},
            {"role": "user", "parts": [{"text": "x"}], "metadata": 1},
        ],
    ],
)
def test_content_boundaries_round_trip_exactly(contents: list[JsonObject]) -> None:
    payload: JsonObject = {"contents": copy.deepcopy(contents)}  # pyright: ignore[reportAssignmentType]
    assert gemini.encode_request(
        gemini.decode_request(payload), require_signatures=False
    ).payload == {"contents": contents}

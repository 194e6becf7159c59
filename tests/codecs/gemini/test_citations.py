"""Citations: grounding and citation metadata ⇄ TextPart.citations, offsets in bytes ⇄ chars."""

from __future__ import annotations

import copy
import json

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.codecs.gemini._citations import byte_offset, char_offset
from interlock.transcript import (
    Citation,
    JsonObject,
    Message,
    ReasoningPart,
    Response,
    TextPart,
    fold_updates,
    response_to_updates,
)
from tests.codecs.gemini.test_stream import decode_trace, encode_updates
from tests.codecs.gemini.wire_fixtures import load, load_stream, validate_response

MUNICH = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQmuenchen1"
WIKI = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQwiki2"
STATS = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQstat3"
FIRST = "München hat rund 1,5 Millionen Einwohner."
SECOND = "Oberbürgermeister ist Dieter Reiter 🏛️."


def _cited(text: str, citation: Citation) -> str:
    assert citation.start is not None and citation.end is not None
    return text[citation.start : citation.end]


def test_byte_and_character_offsets_convert_both_ways_on_non_ascii_text() -> None:
    text = "aü🏛️b"
    assert [byte_offset(text, index) for index in range(len(text) + 1)] == [0, 1, 3, 7, 10, 11]
    assert [char_offset(text, offset) for offset in (0, 1, 3, 7, 10, 11)] == [0, 1, 2, 3, 4, 5]
    assert char_offset(text, 2) == 1, "a byte inside a character counts as its start"


def test_grounding_supports_become_citations_of_the_text_part_with_character_offsets() -> None:
    response = gemini.decode_response(load("response_grounded.json"))
    thought, answer = response.message.parts
    assert isinstance(thought, ReasoningPart) and isinstance(answer, TextPart)
    assert [(c.url, c.title) for c in answer.citations] == [
        (MUNICH, "muenchen.de"),
        (WIKI, "wikipedia.org"),
        (WIKI, "wikipedia.org"),
    ]
    first, second, third = answer.citations
    # The segment's UTF-8 byte offsets (0..42, 43..88) are characters 0..41, 42..81 here.
    assert (first.start, first.end, third.start, third.end) == (0, 41, 42, 81)
    assert _cited(answer.text, first) == _cited(answer.text, second) == FIRST
    assert _cited(answer.text, third) == SECOND
    assert STATS not in [c.url for c in answer.citations], "a source no support cites"


def test_a_grounded_answer_goes_back_to_gemini_exactly() -> None:
    payload = load("response_grounded.json")
    original = copy.deepcopy(payload)
    assert gemini.encode_response(gemini.decode_response(payload)) == original


def _foreign_answer(text: str, citations: tuple[Citation, ...]) -> Response:
    parts = (TextPart(text=text, citations=citations),)
    message = Message(role="assistant", parts=parts)
    return Response(message=message, id="r1", model="m", finish_reason="stop")


def test_another_dialects_citations_become_grounding_metadata_in_bytes() -> None:
    text = f"{FIRST} {SECOND}"
    citations = (
        Citation(url="https://a.example/", title="A", start=0, end=41),
        Citation(url="https://b.example/", title="B", start=0, end=41),
        Citation(url="https://a.example/", title="A", start=42, end=81),
        Citation(url="https://c.example/", title=None),
    )
    payload = gemini.encode_response(_foreign_answer(text, citations))
    validate_response(payload)
    grounding = payload["candidates"][0]["groundingMetadata"]  # type: ignore[index] -- test data
    assert grounding == {
        "groundingChunks": [
            {"web": {"uri": "https://a.example/", "title": "A"}},
            {"web": {"uri": "https://b.example/", "title": "B"}},
            {"web": {"uri": "https://c.example/"}},
        ],
        "groundingSupports": [
            {"segment": {"endIndex": 42, "text": FIRST}, "groundingChunkIndices": [0, 1]},
            {
                "segment": {"startIndex": 43, "endIndex": 88, "text": SECOND},
                "groundingChunkIndices": [0],
            },
        ],
    }
    back = gemini.decode_response(payload).message.parts[0]
    assert isinstance(back, TextPart) and back.citations == citations[:3]


def test_a_responses_url_citation_answer_reaches_a_gemini_client_and_back() -> None:
    text = "Zürich liegt am Zürichsee."
    wire: JsonObject = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-4o",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": text,
                        "annotations": [
                            {
                                "type": "url_citation",
                                "start_index": 16,
                                "end_index": 25,
                                "title": "See",
                                "url": "https://see.example/",
                            }
                        ],
                    }
                ],
            }
        ],
    }
    canonical = openai_responses.decode_response(wire)
    gemini_wire = gemini.encode_response(canonical)
    segment = gemini_wire["candidates"][0]["groundingMetadata"]["groundingSupports"][0]  # type: ignore[index] -- test data
    assert segment["segment"] == {"startIndex": 17, "endIndex": 27, "text": "Zürichsee"}
    again = gemini.decode_response(gemini_wire).message.parts[0]
    assert isinstance(again, TextPart)
    assert [(c.url, c.title, c.start, c.end) for c in again.citations] == [
        ("https://see.example/", "See", 16, 25)
    ]
    chat = openai_chat.encode_response(gemini.decode_response(gemini_wire))
    annotation = chat["choices"][0]["message"]["annotations"][0]  # type: ignore[index] -- test data
    assert annotation["url_citation"]["start_index"] == 16  # type: ignore[index] -- test data


def test_citation_metadata_of_the_gemini_api_and_of_vertex_become_citations() -> None:
    text = "Lorem ipsum — dolor sit amet."
    for key in ("citationSources", "citations"):
        payload: JsonObject = {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "citationMetadata": {
                        key: [
                            {
                                "startIndex": 16,
                                "endIndex": 31,
                                "uri": "https://lorem.example/",
                                "license": "mit",
                            }
                        ]
                    },
                    "index": 0,
                }
            ]
        }
        original = copy.deepcopy(payload)
        response = gemini.decode_response(payload)
        part = response.message.parts[0]
        assert isinstance(part, TextPart)
        (citation,) = part.citations
        assert (citation.url, _cited(text, citation)) == (
            "https://lorem.example/",
            "dolor sit amet.",
        )
        assert citation.extra == {"gemini": {"from": "citationMetadata", "license": "mit"}}
        assert gemini.encode_response(response) == original
    fresh = gemini.encode_response(_foreign_answer(text, part.citations))
    assert fresh["candidates"][0]["citationMetadata"] == {  # type: ignore[index] -- test data
        "citationSources": [
            {"startIndex": 16, "endIndex": 31, "uri": "https://lorem.example/", "license": "mit"}
        ]
    }


def test_a_segment_whose_part_index_does_not_fit_is_placed_in_the_concatenated_text() -> None:
    payload = load("response_grounded.json")
    candidate = payload["candidates"][0]  # type: ignore[index] -- test data
    for support in candidate["groundingMetadata"]["groundingSupports"]:  # type: ignore[index] -- test data
        del support["segment"]["partIndex"]  # type: ignore[index] -- test data
    answer = gemini.decode_response(payload).message.parts[1]
    assert isinstance(answer, TextPart)
    assert _cited(answer.text, answer.citations[0]) == FIRST


def test_a_segment_that_fits_nowhere_gives_a_citation_without_offsets() -> None:
    payload = load("response_grounded.json")
    support = payload["candidates"][0]["groundingMetadata"]["groundingSupports"][1]  # type: ignore[index] -- test data
    support["segment"]["endIndex"] = 999  # type: ignore[index] -- test data
    answer = gemini.decode_response(payload).message.parts[1]
    assert isinstance(answer, TextPart)
    assert (answer.citations[2].url, answer.citations[2].start) == (WIKI, None)


def test_a_grounded_stream_folds_to_the_citations_of_the_answer() -> None:
    """Grounding arrives on the finish chunk, after the trailing signature-only part: the text
    run stays open across that part and finishes with its citations."""
    folded = fold_updates(decode_trace(load_stream("stream_grounded.jsonl")))
    text, signature = folded.message.parts
    assert isinstance(text, TextPart) and isinstance(signature, ReasoningPart)
    assert [(c.url, _cited(text.text, c)) for c in text.citations] == [
        (MUNICH, FIRST),
        (WIKI, FIRST),
        (WIKI, SECOND),
    ]
    non_streamed = gemini.decode_response(gemini.encode_response(folded))
    assert non_streamed.message.parts == folded.message.parts


def test_a_foreign_answer_streams_to_gemini_with_grounding_on_the_last_chunk() -> None:
    text = f"{FIRST} {SECOND}"
    citations = (
        Citation(url="https://a.example/", title="A", start=42, end=81),
        Citation(url="https://b.example/", title="B", start=0, end=41),
    )
    answer = _foreign_answer(text, citations)
    chunks = encode_updates(response_to_updates(answer))
    for chunk in chunks:
        validate_response(chunk)
    final = chunks[-1]["candidates"][0]  # type: ignore[index] -- test data
    supports = final["groundingMetadata"]["groundingSupports"]  # type: ignore[index] -- test data
    assert [support["segment"]["text"] for support in supports] == [SECOND, FIRST]  # type: ignore[index] -- test data
    folded = fold_updates(decode_trace(chunks))
    assert folded.message.parts[0] == answer.message.parts[0]


def test_citations_in_a_gemini_request_history_are_dropped_with_a_warning() -> None:
    from interlock.transcript import Request

    request = Request(
        model="gemini-2.5-flash",
        messages=(
            Message(role="user", parts=(TextPart(text="hi"),)),
            Message(
                role="assistant",
                parts=(TextPart(text="x", citations=(Citation(url="https://x/"),)),),
            ),
            Message(role="user", parts=(TextPart(text="more"),)),
        ),
    )
    encoded = gemini.encode_request(request)
    assert [w.code for w in encoded.warnings] == ["citation_dropped"]
    assert "groundingMetadata" not in json.dumps(encoded.payload)

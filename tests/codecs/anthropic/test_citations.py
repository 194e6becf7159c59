"""Citations: text-block ``citations`` (and ``citations_delta``) ⇄ TextPart.citations."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

from interlock.codecs import anthropic, gemini, openai_responses
from interlock.transcript import (
    Citation,
    JsonObject,
    Message,
    Request,
    Response,
    TextPart,
    fold_updates,
    response_to_updates,
)
from tests.codecs.anthropic.test_stream import decode, encode, event
from tests.codecs.anthropic.wire_fixtures import assert_valid_events, assert_valid_response

TEXT = "Laut der Stadt hat München rund 1,5 Millionen Einwohner."
WEB: JsonObject = {
    "type": "web_search_result_location",
    "cited_text": "München hat 1.512.491 Einwohner (Stand 2024).",
    "url": "https://www.muenchen.de/stadt",
    "title": "Stadt München",
    "encrypted_index": "Eo8BCioIAhgBIiQy",
}
DOCUMENT: JsonObject = {
    "type": "page_location",
    "cited_text": "1,5 Millionen",
    "document_index": 0,
    "document_title": "Statistik 2024",
    "start_page_number": 3,
    "end_page_number": 4,
}


def _answer(*blocks: JsonObject) -> JsonObject:
    return {
        "id": "msg_cite",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(blocks),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def test_web_and_document_citations_cover_their_whole_block_and_go_back_exactly() -> None:
    wire = _answer(
        {"type": "text", "text": "Kurz: "},
        {"type": "text", "text": TEXT, "citations": [WEB, DOCUMENT]},
    )
    original = copy.deepcopy(wire)
    response = anthropic.decode_response(wire)
    plain, cited = response.message.parts
    assert isinstance(plain, TextPart) and plain.citations == ()
    assert isinstance(cited, TextPart)
    web, document = cited.citations
    assert (web.url, web.title, web.start, web.end) == (WEB["url"], WEB["title"], 0, len(TEXT))
    assert web.extra == {"anthropic": {"citation": WEB}}, "encrypted_index kept for replay"
    assert (document.url, document.title) == (None, "Statistik 2024")
    assert anthropic.encode_response(response) == original
    assert_valid_response(anthropic.encode_response(response))


def test_a_list_with_an_unknown_citation_type_is_kept_verbatim_and_its_known_entries_travel() -> (
    None
):
    future: JsonObject = {"type": "future_location", "cited_text": "x"}
    wire = _answer({"type": "text", "text": TEXT, "citations": [WEB, future]})
    original = copy.deepcopy(wire)
    response = anthropic.decode_response(wire)
    part = response.message.parts[0]
    assert isinstance(part, TextPart) and [c.url for c in part.citations] == [WEB["url"]]
    assert anthropic.encode_response(response) == original


def test_citations_deltas_fold_into_the_block_and_stream_back_as_deltas() -> None:
    events = [
        event({"type": "message_start", "message": {**_answer(), "usage": {"input_tokens": 1}}}),
        event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": "", "citations": []},
            }
        ),
        event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "citations_delta", "citation": WEB},
            }
        ),
        event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": TEXT},
            }
        ),
        event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "citations_delta", "citation": DOCUMENT},
            }
        ),
        event({"type": "content_block_stop", "index": 0}),
        event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 5},
            }
        ),
        event({"type": "message_stop"}),
    ]
    folded = fold_updates(decode(events))
    part = folded.message.parts[0]
    assert isinstance(part, TextPart)
    assert [c.extra["anthropic"]["citation"] for c in part.citations] == [WEB, DOCUMENT]
    again = encode(decode(events))
    assert_valid_events(again)
    deltas = [json.loads(e.data)["delta"] for e in again if e.event == "content_block_delta"]
    assert [d["citation"] for d in deltas if d["type"] == "citations_delta"] == [WEB, DOCUMENT]
    assert fold_updates(decode(again)) == folded
    non_streamed = anthropic.decode_response(anthropic.encode_response(folded))
    assert non_streamed.message.parts == folded.message.parts


def _foreign(citation: Citation) -> Response:
    parts = (TextPart(text=TEXT, citations=(citation,)),)
    return Response(message=Message(role="assistant", parts=parts), id="r", model="m")


def test_another_dialects_url_citation_cannot_be_sent_to_anthropic() -> None:
    """Anthropic cites only its own search results (encrypted_index): dropped, with a warning
    in a request; an answer to an Anthropic client leaves it out."""
    foreign = _foreign(Citation(url="https://x.example/", title="X", start=0, end=4))
    assert "citations" not in json.dumps(anthropic.encode_response(foreign))
    request = Request(
        model="claude-sonnet-4-5",
        messages=(
            Message(role="user", parts=(TextPart(text="Frage"),)),
            foreign.message,
            Message(role="user", parts=(TextPart(text="Mehr?"),)),
        ),
    )
    encoded = anthropic.encode_request(request)
    assert [w.code for w in encoded.warnings] == ["citation_dropped"]
    assert "citations" not in json.dumps(encoded.payload)
    streamed = encode(response_to_updates(replace(foreign, finish_reason="stop")))
    assert not any("citations_delta" in e.data for e in streamed)


def test_anthropic_citations_reach_responses_and_gemini_answers() -> None:
    response = anthropic.decode_response(
        _answer({"type": "text", "text": TEXT, "citations": [WEB, DOCUMENT]})
    )
    output = openai_responses.encode_response(response)["output"]
    annotations = output[0]["content"][0]["annotations"]  # type: ignore[index] -- test data
    assert annotations == [
        {
            "type": "url_citation",
            "start_index": 0,
            "end_index": len(TEXT),
            "title": WEB["title"],
            "url": WEB["url"],
        }
    ], "the document citation has no url_citation form"
    grounding = gemini.encode_response(response)["candidates"][0]["groundingMetadata"]  # type: ignore[index] -- test data
    segment = grounding["groundingSupports"][0]["segment"]  # type: ignore[index] -- test data
    assert segment == {"endIndex": len(TEXT.encode()), "text": TEXT}


def test_a_document_citation_in_a_responses_history_is_dropped_with_a_warning() -> None:
    response = anthropic.decode_response(
        _answer({"type": "text", "text": TEXT, "citations": [WEB, DOCUMENT]})
    )
    part = response.message.parts[0]
    assert isinstance(part, TextPart)
    message = replace(response.message, parts=(replace(part, item_id="msg_1"),))
    request = Request(
        model="gpt-5",
        messages=(
            Message(role="user", parts=(TextPart(text="Frage"),)),
            message,
            Message(role="user", parts=(TextPart(text="Mehr?"),)),
        ),
    )
    encoded = openai_responses.encode_request(request)
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("citation_dropped", "messages[1].parts[0]")
    ]
    assert '"url_citation"' in json.dumps(encoded.payload), "the URL citation is carried"

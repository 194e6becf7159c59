"""SSE framing: line endings, comments, multi-line data, events split across chunks."""

from __future__ import annotations

import pytest

from interlock.codecs._sse import SseEvent, SseParser, format_sse


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_splits_events(newline: str) -> None:
    wire = (
        f"event: a{newline}data: 1{newline}{newline}: keep-alive{newline}data: 2{newline}{newline}"
    )
    parser = SseParser()
    # A trailing lone CR may be half a CRLF: that last event waits for more input or finish().
    assert parser.feed(wire) + parser.finish() == [
        SseEvent(data="1", event="a"),
        SseEvent(data="2"),
    ]


def test_events_split_at_any_byte_reassemble() -> None:
    wire = b'event: x\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n'
    for cut in range(len(wire) + 1):
        parser = SseParser()
        events = parser.feed(wire[:cut]) + parser.feed(wire[cut:]) + parser.finish()
        assert events == [SseEvent(data='{"a":\n1}', event="x"), SseEvent(data="[DONE]")], cut


def test_a_final_event_without_blank_line_is_flushed_by_finish() -> None:
    parser = SseParser()
    assert parser.feed("data: last") == []
    assert parser.finish() == [SseEvent(data="last")]


def test_format_round_trips_through_the_parser() -> None:
    text = format_sse('{"x":1}\n{"y":2}', "response.created")
    assert text == 'event: response.created\ndata: {"x":1}\ndata: {"y":2}\n\n'
    assert SseParser().feed(text) == [SseEvent(data='{"x":1}\n{"y":2}', event="response.created")]

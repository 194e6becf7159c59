"""SSE framing over bytes: line endings, comments, multi-line data, events split across
chunks (inside multi-byte characters too), the per-event limit and invalid UTF-8."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs._sse import SseEvent, SseParser, _sse_event, format_sse
from interlock.transcript import DecodeError


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


WIRE = (
    "event: message\r\ndata: 你好, 世界 🌍🚀\r\n\r\n"
    ": a comment line\n"
    'data: {"text": "é ü 𝄞"}\ndata: second line\n\n'
    "data: last\r\r"
).encode()
EXPECTED = [
    SseEvent(data="你好, 世界 🌍🚀", event="message"),
    SseEvent(data='{"text": "é ü 𝄞"}\nsecond line'),
    SseEvent(data="last"),
]


def parse(chunks: list[bytes], parser: SseParser | None = None) -> list[SseEvent]:
    parser = parser or SseParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.finish()


def test_a_stream_split_at_every_byte_position_gives_the_same_events() -> None:
    for cut in range(len(WIRE) + 1):
        assert parse([WIRE[:cut], WIRE[cut:]]) == EXPECTED, cut


def test_a_stream_fed_one_byte_at_a_time_gives_the_same_events() -> None:
    assert parse([WIRE[i : i + 1] for i in range(len(WIRE))]) == EXPECTED


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(WIRE)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(WIRE)]
    assert parse([WIRE[a:b] for a, b in itertools.pairwise(bounds)]) == EXPECTED


def test_pending_counts_exactly_the_bytes_of_the_incomplete_event() -> None:
    parser = SseParser()
    first = b"data: one\n\ndata: tw"
    assert parser.feed(first) == [SseEvent(data="one")]
    assert parser.pending == len(b"data: tw")
    assert parser.feed(b"o\n") == []
    assert parser.pending == len(b"data: two\n")
    assert parser.feed(b"\n: keep-alive\n\n") == [SseEvent(data="two")]
    assert parser.pending == 0


def test_a_leading_byte_order_mark_is_dropped_even_when_split() -> None:
    wire = b"\xef\xbb\xbfdata: x\n\n"
    assert parse([wire[:1], wire[1:2], wire[2:]]) == [SseEvent(data="x")]


def test_invalid_utf8_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        SseParser().feed(b"data: \xff\xfe\n\n")


def test_an_event_over_the_limit_is_a_decode_error_without_waiting_for_its_end() -> None:
    parser = SseParser(max_event_bytes=64)
    parser.feed(b"data: " + b"x" * 40 + b"\n")
    with pytest.raises(DecodeError, match="exceeds the limit of 64 bytes"):
        parser.feed(b"data: " + b"y" * 40)


def test_events_under_the_limit_pass_however_many_there_are() -> None:
    parser = SseParser(max_event_bytes=64)
    events = parser.feed(b"data: 12345\n\n" * 100)
    assert len(events) == 100


def test_an_event_without_data_is_discarded_with_its_name() -> None:
    assert parse([b"event: ping\n\ndata: x\n\n"]) == [SseEvent(data="x")]


LF_WIRE = (
    "event: message\ndata: 你好 🌍\n\n"
    ": a comment line\n"
    'data: {"text": "é"}\ndata:second line\ndata\n\n'
    "event: empty\n\n"
    "id: 7\nretry: 10\ndata:  two spaces\n\n"
    "data: last"
).encode()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(LF_WIRE)), max_size=12))
def test_lf_only_streams_read_as_their_crlf_form_under_any_chunking(cuts: list[int]) -> None:
    # Streams without CR take a line splitter of their own; the same lines with CRLF take
    # the general one. Both give the same events, whatever the chunking.
    bounds = [0, *sorted(cuts), len(LF_WIRE)]
    lf = parse([LF_WIRE[a:b] for a, b in itertools.pairwise(bounds)])
    assert lf == parse([LF_WIRE.replace(b"\n", b"\r\n")])
    assert lf == [
        SseEvent(data="你好 🌍", event="message"),
        SseEvent(data='{"text": "é"}\nsecond line\n'),
        SseEvent(data=" two spaces"),
        SseEvent(data="last"),
    ]


def test_invalid_utf8_in_a_data_line_of_an_lf_stream_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not valid UTF-8"):
        SseParser().feed(b"data: ok\n\ndata: \xff\n\n")


@given(st.text(max_size=6), st.one_of(st.none(), st.text(max_size=4)))
def test_a_parsed_event_is_the_one_its_class_builds(data: str, name: str | None) -> None:
    built = _sse_event(data, name)  # what the parser builds (writing its slots)
    constructed = SseEvent(data, name)
    assert built == constructed and repr(built) == repr(constructed)
    assert type(built) is SseEvent and hash(built) == hash(constructed)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.data = "x"  # pyright: ignore[reportAttributeAccessIssue] -- frozen, checked

"""Server-sent events framing, separate from any JSON decoding.

:class:`SseParser` is a sans-I/O parser over *bytes*: feed it the chunks a socket gives
(split anywhere, even inside a multi-byte character), get back complete events.
:func:`format_sse` writes one event with LF line endings.

Lines are cut on the raw bytes before any text decoding. CR and LF never occur inside a
multi-byte UTF-8 sequence, so a character split across two reads simply waits in the
line buffer for its remaining bytes: each complete line is then decoded once, strictly.
(An incremental decoder over whole chunks would be equally correct, but would lose the
byte offsets that :attr:`SseParser.pending` reports.) Malformed input (invalid UTF-8, an
event larger than ``max_event_bytes``) raises :class:`~interlock.transcript.DecodeError`,
so a stream loop handles it like any other malformed upstream answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import cast

from interlock.transcript import DecodeError

DEFAULT_MAX_EVENT_BYTES = 32 * 1024 * 1024
"""The largest single event accepted by default (a Responses ``response.completed`` event
carries the whole answer, so this is sized like a large answer, not like a delta)."""

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: the optional ``event:`` name and the joined ``data:`` lines."""

    data: str
    event: str | None = None


_new = object.__new__
_SET_DATA = cast("Callable[[object, object], None]", vars(SseEvent)["data"].__set__)
_SET_EVENT = cast("Callable[[object, object], None]", vars(SseEvent)["event"].__set__)
assert tuple(item.name for item in fields(SseEvent)) == ("data", "event")


def _sse_event(data: str, name: str | None) -> SseEvent:
    """``SseEvent(data, name)`` built by writing its two slots (one per event parsed):
    equal to and as frozen as the class's own."""
    event = _new(SseEvent)
    _SET_DATA(event, data)
    _SET_EVENT(event, name)
    return event


class SseParser:
    """Incremental SSE parser (WHATWG event-stream rules, CR/LF/CRLF line endings).

    Invariants: ``_buffer`` holds the bytes of the current, unterminated line only;
    ``pending`` is the number of fed bytes that belong to the event not yet complete
    (its finished lines plus ``_buffer``), so the caller can forward exactly the bytes of
    complete events. Neither exceeds ``max_event_bytes``: past it, :meth:`feed` raises.
    """

    __slots__ = ("_buffer", "_data", "_event", "_event_bytes", "_started", "max_event_bytes")

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._buffer = b""
        self._data: list[str] = []
        self._event: str | None = None
        self._event_bytes = 0
        self._started = False

    @property
    def pending(self) -> int:
        """Bytes fed so far that belong to an event not yet complete."""
        return self._event_bytes + len(self._buffer)

    @property
    def mid_line(self) -> bool:
        """True when the input so far ends inside a line (a lone final CR is a line end)."""
        return bool(self._buffer) and not self._buffer.endswith(b"\r")

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        """Consume a chunk; return the events it completed."""
        data = chunk.encode() if isinstance(chunk, str) else chunk
        if not self._started and data:
            data, self._started = self._strip_bom(data)
        buffer = self._buffer + data if self._buffer else data
        events = self._lf_lines(buffer) if b"\r" not in buffer else self._lines(buffer)
        if self.pending > self.max_event_bytes:
            raise DecodeError(
                "stream", f"an event exceeds the limit of {self.max_event_bytes} bytes"
            )
        return events

    def _lines(self, buffer: bytes) -> list[SseEvent]:
        """The events of ``buffer``'s complete lines (any line ending); keeps the rest."""
        events: list[SseEvent] = []
        start = 0
        while True:
            cut = _line_end(buffer, start)
            if cut is None:
                break
            end, skip = cut
            event = self._line(buffer, start, end)
            self._event_bytes += end + skip - start
            if end == start:
                self._event_bytes = 0  # a blank line closes the event (or a comment block)
            if event is not None:
                events.append(event)
            start = end + skip
        self._buffer = buffer[start:]
        return events

    def _lf_lines(self, buffer: bytes) -> list[SseEvent]:
        """:meth:`_lines` for a buffer without CR (every line ends with LF, as nearly every
        upstream writes them): the lines are cut by one ``split`` and a ``data: `` line is
        taken without :meth:`_line`; the same events, state and errors."""
        last = buffer.rfind(b"\n")
        if last < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[last + 1 :]
        events: list[SseEvent] = []
        for line in buffer[:last].split(b"\n"):
            if not line:  # a blank line closes the event (or a comment block)
                self._event_bytes = 0
                if self._data:  # _dispatch without its calls: once per event
                    event = _new(SseEvent)  # _sse_event, inline
                    _SET_DATA(event, "\n".join(self._data))
                    _SET_EVENT(event, self._event)
                    events.append(event)
                    self._data = []
                self._event = None  # (an event without data is discarded)
                continue
            self._event_bytes += len(line) + 1
            if line.startswith(b"data: "):
                try:
                    self._data.append(line[6:].decode("utf-8"))
                    continue
                except UnicodeDecodeError:
                    pass  # _line raises the error for the whole line
            self._line(line, 0, len(line))
        return events

    def finish(self) -> list[SseEvent]:
        """Flush a final event that was not followed by a blank line."""
        events = self.feed(b"\n\n") if self._buffer else []
        if self._data:
            events.append(self._dispatch())
        self._event_bytes = 0
        return events

    def _strip_bom(self, data: bytes) -> tuple[bytes, bool]:
        """A leading byte-order mark is not part of the stream (decided on its 3 bytes)."""
        head = self._buffer + data
        if len(head) < len(_BOM) and _BOM.startswith(head):
            return data, False
        if head.startswith(_BOM):
            self._buffer = b""
            return head[len(_BOM) :], True
        return data, True

    def _line(self, buffer: bytes, start: int, end: int) -> SseEvent | None:
        if start == end:
            if self._data:
                return self._dispatch()
            self._event = None  # an event without data is discarded
            return None
        if buffer[start] == 0x3A:  # ":" starts a comment
            return None
        try:
            line = buffer[start:end].decode("utf-8")
        except UnicodeDecodeError as error:
            raise DecodeError(
                "stream", f"the event stream is not valid UTF-8 ({error.reason})"
            ) from None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent:
        event = _sse_event("\n".join(self._data), self._event)
        self._data = []
        self._event = None
        return event


def _line_end(buffer: bytes, start: int) -> tuple[int, int] | None:
    """Where the line at ``start`` ends and how long its terminator is (CR, LF or CRLF)."""
    newline = buffer.find(b"\n", start)
    carriage = buffer.find(b"\r", start, newline if newline >= 0 else len(buffer))
    if carriage < 0:
        return (newline, 1) if newline >= 0 else None
    if carriage + 1 == len(buffer):
        return None  # a CR at the very end may be the first half of a CRLF
    return carriage, 2 if buffer[carriage + 1] == 0x0A else 1


def format_sse(data: str, event: str | None = None) -> str:
    """One event in wire form (``event:`` line if named, ``data:`` lines, blank line)."""
    head = f"event: {event}\n" if event else ""
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n"

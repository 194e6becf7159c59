"""Server-sent events framing, separate from any JSON decoding.

:class:`SseParser` is a sans-I/O line splitter: feed it bytes as they arrive, get back
complete events. :func:`format_sse` writes one event with LF line endings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: the optional ``event:`` name and the joined ``data:`` lines."""

    data: str
    event: str | None = None


class SseParser:
    """Incremental SSE parser (WHATWG event-stream rules, CR/LF/CRLF line endings)."""

    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event: str | None = None

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        """Consume a chunk; return the events it completed."""
        text = chunk.decode("utf-8") if isinstance(chunk, bytes) else chunk
        buffer = self._buffer + text if self._buffer else text
        events: list[SseEvent] = []
        start = 0
        while True:
            cut = _line_end(buffer, start)
            if cut is None:
                break
            end, skip = cut
            event = self._line(buffer[start:end])
            if event is not None:
                events.append(event)
            start = end + skip
        self._buffer = buffer[start:]
        return events

    def finish(self) -> list[SseEvent]:
        """Flush a final event that was not followed by a blank line."""
        events = self.feed("\n\n") if self._buffer else []
        if self._data:
            events.append(self._dispatch())
        return events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch() if self._data else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent:
        event = SseEvent(data="\n".join(self._data), event=self._event)
        self._data = []
        self._event = None
        return event


def _line_end(buffer: str, start: int) -> tuple[int, int] | None:
    """Where the line at ``start`` ends and how long its terminator is (CR, LF or CRLF)."""
    newline = buffer.find("\n", start)
    carriage = buffer.find("\r", start, newline if newline >= 0 else len(buffer))
    if carriage < 0:
        return (newline, 1) if newline >= 0 else None
    if carriage + 1 == len(buffer):
        return None  # a CR at the very end may be the first half of a CRLF
    return carriage, 2 if buffer[carriage + 1] == "\n" else 1


def format_sse(data: str, event: str | None = None) -> str:
    """One event in wire form (``event:`` line if named, ``data:`` lines, blank line)."""
    head = f"event: {event}\n" if event else ""
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n"

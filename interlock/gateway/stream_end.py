"""Did an undecoded stream end properly? A same-dialect stream relayed byte for byte is
not decoded (that is what keeps it cheap), so its end is recognised from its events.

An upstream whose connection closes cleanly between two events, before the dialect's last
event, looks to a client like a finished stream with its answer cut short. The relay asks
:class:`EndWatch` at the end and, when no final event came, sends the client dialect's
error event (``upstream_truncated``), as a decoding relay would (the decoders report the
same streams as failed). The final events, per dialect, as the stream decoders read them:

* Chat Completions: ``data: [DONE]``, or a chunk with a non-null ``finish_reason``;
* Responses: ``response.completed`` / ``response.incomplete`` / ``response.failed``;
* Anthropic Messages: ``message_stop``;
* Gemini: a chunk with a ``finishReason``.

An upstream error event ends every dialect's stream too (its own failure, already sent).
"""

from __future__ import annotations

import re

from interlock.codecs._sse import SseEvent

_CHAT_FINISH = re.compile(r'"finish_reason"\s*:\s*"')
_RESPONSES_END = ("response.completed", "response.incomplete", "response.failed", "error")
_ANTHROPIC_END = ("message_stop", "error")
_ERROR_MEMBER = re.compile(r'^\s*\{\s*"error"\s*:')


def _typed(event: SseEvent, names: tuple[str, ...]) -> bool:
    """The event is one of ``names``, by its ``event:`` field or its data's ``type``."""
    if event.event is not None:
        return event.event in names
    return any(f'"type":"{name}"' in event.data.replace(" ", "") for name in names)


def ends(dialect: str, event: SseEvent) -> bool:
    """True when ``event`` is a final event of ``dialect``'s stream."""
    data = event.data
    match dialect:
        case "openai-chat":
            return data == "[DONE]" or bool(_CHAT_FINISH.search(data) or _ERROR_MEMBER.match(data))
        case "openai-responses":
            return _typed(event, _RESPONSES_END)
        case "anthropic":
            return _typed(event, _ANTHROPIC_END)
        case "gemini":
            return '"finishReason"' in data or bool(_ERROR_MEMBER.match(data))
        case _:
            return True  # a dialect this module does not know: nothing to judge


class EndWatch:
    """Watches the events of one stream for a final one."""

    __slots__ = ("dialect", "ended")

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.ended = False

    def events(self, events: list[SseEvent]) -> None:
        """Note ``events`` (only the last can be final, but any may be)."""
        if not self.ended:
            self.ended = any(ends(self.dialect, event) for event in events)

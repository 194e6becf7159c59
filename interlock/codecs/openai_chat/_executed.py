"""Groq's ``executed_tools``: the server-side tools Groq ran for an answer.

Groq's compound systems run tools themselves (web search, code execution, browser
automation…) and list each run on the assistant message (``message.executed_tools``; a
stream sends them in ``delta.executed_tools``): its ``type``, ``arguments``, ``output`` and
typed results. Each run becomes a :class:`HostedToolPart` (``provider="groq"``, ``item_type``
the run's ``type``, ``item`` the wire object verbatim), so every other dialect refuses or
warns about it as it does any other provider's hosted item, and an answer translated for a
client says it was dropped. The Chat encoder writes the parts back as ``executed_tools`` on
the message, in their order (a stream: one delta listing them all).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from interlock.codecs.openai_chat._wire import DIALECT, as_list, as_object
from interlock.transcript import HostedToolPart, JsonObject, JsonValue, Part

PROVIDER = "groq"
FIELD = "executed_tools"

VENDOR_RESPONSE_FIELDS = ("usage_breakdown", "mcp_list_tools")
"""Groq's top-level answer fields with no canonical home: a per-model breakdown of the usage
of a compound system, the MCP tools it discovered. A Chat client gets them back as decoded
(``Response.extra``); another dialect's client cannot, and must be told
(:func:`vendor_response_fields`)."""


GROQ_END = "openai-chat:x_groq"
"""``Response.extra`` key of the :data:`VENDOR_RESPONSE_FIELDS` a Groq stream sent in the
``x_groq`` of its last chunk (a stream's other top-level fields are those of its first chunk,
in ``extra[DIALECT]``); the Chat stream encoder writes them back there."""


def groq_end_fields(x_groq: JsonObject) -> JsonObject:
    """The vendor fields of a chunk's ``x_groq`` (not null or empty)."""
    return {
        name: x_groq[name]
        for name in VENDOR_RESPONSE_FIELDS
        if x_groq.get(name) not in (None, [], {})
    }


def vendor_response_fields(extra: Mapping[str, JsonObject]) -> list[str]:
    """The :data:`VENDOR_RESPONSE_FIELDS` a decoded Chat answer holds (not null or empty),
    top-level or (streamed) in the last chunk's ``x_groq``."""
    found: list[str] = []
    for key in (DIALECT, GROQ_END):
        kept = extra.get(key, {})
        found += [name for name in VENDOR_RESPONSE_FIELDS if kept.get(name) not in (None, [], {})]
    return found


def decode_executed(value: JsonValue, path: str) -> list[HostedToolPart]:
    """One hosted part per entry of an ``executed_tools`` array."""
    parts: list[HostedToolPart] = []
    for i, entry in enumerate(as_list(value, path)):
        parts.append(executed_part(as_object(entry, f"{path}[{i}]")))
    return parts


def executed_part(item: JsonObject) -> HostedToolPart:
    """The hosted part of one executed-tool object (kept verbatim)."""
    kind = item.get("type")
    return HostedToolPart(
        provider=PROVIDER,
        item_type=kind if isinstance(kind, str) and kind else "executed_tool",
        item=item,
    )


def is_executed(part: Part) -> bool:
    """True for a part this codec decoded from ``executed_tools``."""
    return isinstance(part, HostedToolPart) and part.provider == PROVIDER


def encode_executed(parts: Iterable[Part]) -> list[JsonValue]:
    """The ``executed_tools`` array of these parts (those decoded from it), in order."""
    return [part.item for part in parts if isinstance(part, HostedToolPart) and is_executed(part)]

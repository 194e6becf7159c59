"""Groq's ``executed_tools``: the server-side tools Groq ran for an answer.

Groq's compound systems run tools themselves (web search, code execution, browser
automation…) and list each run on the assistant message (``message.executed_tools``; a
stream sends them in ``delta.executed_tools``): its ``type``, ``arguments``, ``output`` and
typed results. Each run becomes a :class:`HostedToolPart` (``provider="groq"``, ``item_type``
the run's ``type``, ``item`` the wire object verbatim), so every other dialect refuses or
warns about it as it does any other provider's hosted item, and an answer translated for a
client says it was dropped. The Chat encoder writes the parts back as ``executed_tools`` on
the message, in their order (a stream: one delta listing them all).

The MCP tools a compound system discovered on a remote MCP server (the answer's top-level
``mcp_list_tools``, each entry shaped like a Responses ``mcp_list_tools`` item: ``id``,
``server_label``, ``tools``) are hosted parts too (``item_type="mcp_list_tools"``), first in
the message; the Chat encoder writes them back at the top level (a stream: on a chunk of
their own, before the content). Its ``usage_breakdown`` is ``Usage.breakdown``
(:mod:`._usage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from interlock.codecs.openai_chat._fields import FieldPolicy, admits
from interlock.codecs.openai_chat._usage import decode_breakdown, encode_breakdown
from interlock.codecs.openai_chat._wire import DIALECT, as_list, as_object
from interlock.transcript import (
    HostedToolPart,
    JsonObject,
    JsonValue,
    Message,
    Part,
    Response,
    Usage,
)

PROVIDER = "groq"
FIELD = "executed_tools"

LISTED = "mcp_list_tools"
"""The answer field (and hosted part ``item_type``) of the MCP tools Groq discovered."""

BREAKDOWN = "usage_breakdown"
"""The answer field of a compound system's per-model usage."""

VENDOR_RESPONSE_FIELDS = (BREAKDOWN, LISTED)
"""Groq's top-level answer fields. Decoded into the canonical model when they have the
documented shape; one with another shape is kept verbatim in ``Response.extra``: a Chat
client gets it back, another dialect's client cannot, and must be told
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
    return (
        isinstance(part, HostedToolPart) and part.provider == PROVIDER and part.item_type != LISTED
    )


def is_listed(part: Part) -> bool:
    """True for a part this codec decoded from ``mcp_list_tools``."""
    return (
        isinstance(part, HostedToolPart) and part.provider == PROVIDER and part.item_type == LISTED
    )


def decode_listed(value: JsonValue) -> list[HostedToolPart] | None:
    """The hosted parts of a top-level ``mcp_list_tools`` array, or ``None`` when it is not a
    list of objects (then kept verbatim)."""
    if not isinstance(value, list) or not value:
        return None
    items = [item for item in value if isinstance(item, dict)]
    if len(items) != len(value):
        return None
    return [listed_part(item) for item in items]


def listed_part(item: JsonObject) -> HostedToolPart:
    """The hosted part of one ``mcp_list_tools`` entry (kept verbatim)."""
    label = item.get("server_label")
    return HostedToolPart(
        provider=PROVIDER,
        item_type=LISTED,
        item=item,
        server_label=label if isinstance(label, str) else None,
    )


def encode_listed(parts: Iterable[Part]) -> list[JsonValue]:
    """The top-level ``mcp_list_tools`` array of these parts (those decoded from it)."""
    return [part.item for part in parts if isinstance(part, HostedToolPart) and is_listed(part)]


def encode_executed(parts: Iterable[Part]) -> list[JsonValue]:
    """The ``executed_tools`` array of these parts (those decoded from it), in order."""
    return [part.item for part in parts if isinstance(part, HostedToolPart) and is_executed(part)]


def take_groq_fields(
    holder: JsonObject, message: Message, usage: Usage | None, path: str
) -> tuple[Message, Usage | None, set[str]]:
    """``message`` with the hosted parts of ``holder``'s ``mcp_list_tools`` first, ``usage``
    with the breakdown of its ``usage_breakdown`` (only beside a usage), and the names of the
    fields so decoded (the others stay unknown fields, kept verbatim)."""
    taken: set[str] = set()
    listed = decode_listed(holder.get(LISTED))
    if listed is not None:
        message = replace(message, parts=(*listed, *message.parts))
        taken.add(LISTED)
    breakdown = None if usage is None else decode_breakdown(holder.get(BREAKDOWN), path)
    if usage is not None and breakdown is not None:
        usage = replace(usage, breakdown=breakdown)
        taken.add(BREAKDOWN)
    return message, usage, taken


def groq_fields(
    parts: Iterable[Part], usage: Usage | None, fields: FieldPolicy
) -> dict[str, JsonValue]:
    """The ``mcp_list_tools`` of ``parts`` and the ``usage_breakdown`` of ``usage``, those the
    client's dialect admits as answer fields (any but plain OpenAI's)."""
    found: dict[str, JsonValue] = {}
    listed = encode_listed(parts)
    if listed:
        found[LISTED] = listed
    if usage is not None and usage.breakdown:
        found[BREAKDOWN] = encode_breakdown(usage.breakdown, fields)
    dialect = fields.dialect
    return {
        name: value
        for name, value in found.items()
        if dialect is None or admits("response", name, value, dialect, request=False)
    }


def put_groq_fields(body: JsonObject, response: Response, fields: FieldPolicy) -> None:
    """Write a response's ``mcp_list_tools`` parts and usage breakdown back into ``body``."""
    body.update(groq_fields(response.message.parts, response.usage, fields))

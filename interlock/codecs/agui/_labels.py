"""The codec's own key in AG-UI ``metadata``: facts AG-UI messages have no field for.

AG-UI 1.0 messages and tool calls carry an open ``metadata`` object (only the key
``"ag-ui"`` is reserved). The official client keeps the other keys, merges the
``metadata`` of ``TEXT_MESSAGE_END``/``REASONING_MESSAGE_END`` into the message (last
write wins per key) and sends it back in the next ``RunAgentInput``. This codec writes
under ``metadata["interlock"]``, and only when there is something to say:

- a message whose string ``content`` joins several text parts, or holds a refusal
  (assistant, system, developer): ``{"content": [{"type": "text" | "refusal",
  "length": n, "encryptedValue"?: sealed}, ...]}`` — the parts in order, lengths in
  code points summing to ``len(content)``, a signed text part's signature sealed in its
  entry. A message-level ``encryptedValue`` next to a layout belongs to the last entry
  (that is how a streamed step ends up: the encoder starts a new message after a signed
  text);
- a reasoning message without a sealed value that is not a summary: ``{"reasoningKind":
  "raw" | "encrypted", "itemId"?: str}`` (a sealed value carries both itself,
  authenticated; an unlabelled reasoning message is a summary);
- a tool call (real or a synthetic ``confirm_changes``) of a hosted tool:
  ``{"owner": "hosted", "serverLabel"?: str}``;
- a tool result whose outcome the wire cannot say: ``{"outcome": "failed" | "denied" |
  "interrupted"}`` (a tool message's ``error`` says only "failed"; a streamed
  ``TOOL_CALL_RESULT`` has no ``error`` at all).

These are labels, not credentials: a client can edit them like it can edit ``content``,
so nothing here decides identity or authority (the gateway keeps the thread it issued;
signatures inside a layout are sealed and verified like every other opaque payload).
A label this codec did not write in that shape is refused with :class:`DecodeError`
naming the path: it never guesses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    Opaque,
    ReasoningKind,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolOutcome,
    ToolResultPart,
)

LABEL_KEY = "interlock"
"""This codec's key inside AG-UI ``metadata``."""

_FAILURES: dict[str, ToolOutcome] = {
    "failed": "failed",
    "denied": "denied",
    "interrupted": "interrupted",
}
_REASONING_KINDS: dict[str, ReasoningKind] = {
    "raw": "raw",
    "summary": "summary",
    "encrypted": "encrypted",
}

Sealer = Callable[[Opaque], str]
"""Seals one opaque payload for the browser."""
Opener = Callable[[str, str], Opaque]
"""Verifies and unseals the value found at a path (raises ``SealError``)."""


def split_labels(metadata: JsonValue, path: str) -> tuple[JsonObject, JsonObject | None]:
    """``(labels, other metadata)`` of an inbound ``metadata`` object.

    ``labels`` is this codec's entry (``{}`` when absent); the rest is what the client
    put there (``None`` when nothing is left).
    """
    if not isinstance(metadata, dict):
        return {}, None
    rest = {key: value for key, value in metadata.items() if key != LABEL_KEY}
    labels = metadata.get(LABEL_KEY, {})
    if not isinstance(labels, dict):
        raise DecodeError(f"{path}.{LABEL_KEY}", "must be an object")
    return labels, rest or None


# ------------------------------------------------------------------ content layout


def needs_layout(parts: Sequence[TextPart | RefusalPart]) -> bool:
    """True when one ``content`` string cannot say what ``parts`` are on its own."""
    return len(parts) > 1 or any(isinstance(part, RefusalPart) for part in parts)


def layout_entry(part: TextPart | RefusalPart, length: int, sealed: str | None) -> JsonObject:
    """One layout entry: the part's type, its length in ``content``, its sealed signature."""
    entry: JsonObject = {"type": part.kind, "length": length}
    if sealed is not None:
        entry["encryptedValue"] = sealed
    return entry


def content_layout(parts: Sequence[TextPart | RefusalPart], seal: Sealer) -> list[JsonValue]:
    """The layout of ``parts`` joined into one ``content`` (module docstring)."""
    entries: list[JsonValue] = []
    for part in parts:
        signature = part.signature if isinstance(part, TextPart) else None
        sealed = seal(signature) if signature is not None else None
        entries.append(layout_entry(part, len(part.text), sealed))
    return entries


def read_layout(
    content: str,
    labels: JsonObject,
    path: str,
    open_value: Opener,
    *,
    refusals: bool,
) -> list[TextPart | RefusalPart] | None:
    """The parts a layout label describes (``None`` without one); raises ``DecodeError``.

    ``path`` names the message; ``refusals`` says whether the role may hold refusals.
    """
    layout = labels.get("content")
    if layout is None:
        return None
    where = f"{path}.metadata.{LABEL_KEY}.content"
    if not isinstance(layout, list) or not layout:
        raise DecodeError(where, "a content layout is a non-empty list")
    parts: list[TextPart | RefusalPart] = []
    offset = 0
    for index, entry in enumerate(layout):
        part, length = _layout_part(content, offset, entry, f"{where}[{index}]", open_value)
        if isinstance(part, RefusalPart) and not refusals:
            raise DecodeError(f"{where}[{index}].type", "this role holds no refusals")
        parts.append(part)
        offset += length
    if offset != len(content):
        raise DecodeError(where, "the lengths do not add up to the content")
    return parts


def _layout_part(
    content: str, offset: int, entry: JsonValue, where: str, open_value: Opener
) -> tuple[TextPart | RefusalPart, int]:
    if not isinstance(entry, dict):
        raise DecodeError(where, "a layout entry is an object")
    kind, length = entry.get("type"), entry.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise DecodeError(f"{where}.length", "must be a non-negative integer")
    if offset + length > len(content):
        raise DecodeError(f"{where}.length", "runs past the end of the content")
    text = content[offset : offset + length]
    sealed = entry.get("encryptedValue")
    if kind == "refusal" and sealed is None:
        return RefusalPart(text=text), length
    if kind != "text":
        raise DecodeError(f"{where}.type", 'must be "text" (or "refusal", unsigned)')
    if sealed is None:
        return TextPart(text=text), length
    if not isinstance(sealed, str):
        raise DecodeError(f"{where}.encryptedValue", "must be a sealed string")
    return TextPart(text=text, signature=open_value(sealed, f"{where}.encryptedValue")), length


# ---------------------------------------------------------------- reasoning labels


def reasoning_labels(part: ReasoningPart) -> JsonObject | None:
    """The labels of a reasoning message whose part has no opaque payload to seal.

    Nothing for a summary: that is how an unlabelled reasoning message reads, so the
    events stay exactly what they were before labels existed; an unsealed summary's item
    id is therefore not carried (the server-owned thread keeps it).
    """
    if part.opaque is not None or part.reasoning_kind == "summary":
        return None
    labels: JsonObject = {"reasoningKind": part.reasoning_kind}
    if part.item_id is not None:
        labels["itemId"] = part.item_id
    return labels


def read_reasoning_labels(labels: JsonObject, path: str) -> tuple[ReasoningKind, str | None]:
    """``(kind, item id)`` from a reasoning message's labels (``summary``/none without)."""
    where = f"{path}.metadata.{LABEL_KEY}"
    kind_label = labels.get("reasoningKind", "summary")
    kind = _REASONING_KINDS.get(kind_label) if isinstance(kind_label, str) else None
    if kind is None:
        raise DecodeError(f"{where}.reasoningKind", 'must be "raw", "summary" or "encrypted"')
    item_id = labels.get("itemId")
    if item_id is not None and not isinstance(item_id, str):
        raise DecodeError(f"{where}.itemId", "must be a string")
    return kind, item_id


# -------------------------------------------------------------------- tool owners


def call_labels(call: ToolCallPart) -> JsonObject | None:
    """The labels of a hosted tool call (nothing for local and client calls)."""
    if call.owner != "hosted":
        return None
    labels: JsonObject = {"owner": "hosted"}
    if call.server_label is not None:
        labels["serverLabel"] = call.server_label
    return labels


def read_call_labels(labels: JsonObject, path: str) -> tuple[bool, str | None]:
    """``(hosted, server label)`` from a tool call's labels (``path`` names the call)."""
    where = f"{path}.metadata.{LABEL_KEY}"
    owner = labels.get("owner")
    if owner is None:
        return False, None
    if owner != "hosted":
        raise DecodeError(f"{where}.owner", 'only "hosted" is written here')
    server_label = labels.get("serverLabel")
    if server_label is not None and not isinstance(server_label, str):
        raise DecodeError(f"{where}.serverLabel", "must be a string")
    return True, server_label


# ------------------------------------------------------------------ tool outcomes


def result_labels(result: ToolResultPart, *, error_field: bool) -> JsonObject | None:
    """The outcome label of a result, when the wire does not say it (``error_field``: a
    tool message, whose ``error`` already says ``failed``)."""
    if result.outcome == "success" or (error_field and result.outcome == "failed"):
        return None
    return {"outcome": result.outcome}


def read_result_labels(labels: JsonObject, path: str, *, has_error: bool) -> ToolOutcome:
    """A tool message's outcome: its label, else ``failed`` with an ``error``, else success."""
    label = labels.get("outcome")
    if label is None:
        return "failed" if has_error else "success"
    outcome = _FAILURES.get(label) if isinstance(label, str) else None
    if outcome is None:
        raise DecodeError(
            f"{path}.metadata.{LABEL_KEY}.outcome", 'must be "failed", "denied" or "interrupted"'
        )
    return outcome

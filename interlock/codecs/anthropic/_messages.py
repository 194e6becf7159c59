"""``system`` + ``messages[]`` ⇄ canonical messages.

Decode: ``system`` becomes one leading ``system`` message. An ``assistant`` message becomes
one ``assistant`` message, blocks in order. A ``user`` message becomes a ``tool`` message per
``tool_result`` block and a ``user`` message per run of other blocks. ``content`` is a string
(one text block) or a list of blocks. A ``system`` message inside ``messages[]`` (newer
models' mid-conversation instructions, never the first message) becomes a ``system``
message in its place, marked so that it goes back to Anthropic in its place; any other role
is a :class:`DecodeError` naming ``messages[i].role``.

Encode: leading ``system``/``developer`` messages become ``system``; ``assistant`` →
``assistant``; ``user`` and ``tool`` → ``user``. Consecutive canonical messages with the same
wire role are merged into one wire message (the service merges them too, and roles must
alternate); ``extra["anthropic"]["newMessage"]`` records where a received request had two
same-role messages in a row, so the same-dialect round trip is exact. A message left with no
block (everything in it was foreign) is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from interlock.codecs.anthropic._blocks import (
    decode_block,
    decode_result,
    plain_block,
    plain_result,
)
from interlock.codecs.anthropic._encode import PartEncoder
from interlock.codecs.anthropic._wire import (
    DIALECT,
    PROVIDER,
    as_list,
    as_object,
    as_str,
    marks,
    own_extra,
    split,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    Message,
    Part,
    ReplayPolicy,
    Role,
    TextPart,
)
from interlock.transcript import build as built

_MESSAGE = frozenset({"role", "content"})
_PLAIN_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant"}
ROLES = ("user", "assistant", "system")
"""The roles of ``messages[]`` the service knows (``system``: mid-conversation instructions,
accepted by the models that support them, refused by the others)."""


def decode_system(value: JsonValue, path: str) -> Message:
    """``system`` (a string or a list of text blocks) as one system message."""
    if isinstance(value, str):
        return Message(role="system", parts=(TextPart(text=value),), extra=marks(string=True))
    parts = tuple(
        decode_block(item, f"{path}[{index}]") for index, item in enumerate(as_list(value, path))
    )
    return Message(role="system", parts=parts)


def decode_messages(value: JsonValue, path: str, issuer: str = PROVIDER) -> list[Message]:
    """``messages[]`` as canonical messages, tool results split into ``tool`` messages;
    signatures named as issued by vendor ``issuer``."""
    messages: list[Message] = []
    names: dict[str, str] = {}
    previous_role: str | None = None
    for index, item in enumerate(as_list(value, path)):
        plain = plain_messages(item, previous_role, names, issuer)
        if plain is not None:
            previous_role, decoded = plain
            messages.extend(decoded)
            continue
        where = f"{path}[{index}]"
        fields, rest = split(as_object(item, where), _MESSAGE)
        role = as_str(fields.get("role"), f"{where}.role")
        if role not in ROLES:
            raise DecodeError(
                f"{where}.role", f"expected 'user', 'assistant' or 'system', got {role!r}"
            )
        if role == "system" and index == 0:
            raise DecodeError(
                f"{where}.role",
                "a system message in messages[] comes after a user turn; instructions that "
                "open the conversation go in the top-level system field",
            )
        content = fields.get("content")
        if role == "system":
            decoded = [decode_system(content, f"{where}.content")]
        else:
            decoded = _decode_content(content, f"{where}.content", role, names, issuer)
        own: JsonObject = {}
        if rest:
            own["fields"] = rest
        if isinstance(content, str):
            own["string"] = True
        if role not in ("user", "assistant"):
            own["role"] = role
        if role == previous_role:
            own["newMessage"] = True
        if not decoded:
            decoded = [Message(role="assistant" if role == "assistant" else "user", parts=())]
        first = decoded[0]
        decoded[0] = Message(
            role=first.role, parts=first.parts, extra={DIALECT: own} if own else {}
        )
        messages.extend(decoded)
        previous_role = role
    return messages


def plain_messages(
    item: JsonValue, previous_role: str | None, names: dict[str, str], issuer: str = PROVIDER
) -> tuple[Role, list[Message]] | None:
    """The role and messages of a wire message of the commonest shape, decoded directly: exactly
    ``role`` (``user`` or ``assistant``) and ``content``, a string or a non-empty list of
    blocks :func:`plain_block` takes (and, in a user message, ``tool_result`` blocks
    :func:`plain_result` takes). ``None`` for any other message, which
    :func:`decode_messages` then decodes the general way, to the same messages (the calls
    recorded in ``names`` included)."""
    if not isinstance(item, dict) or len(item) != 2:
        return None
    content = item.get("content")
    given = item.get("role")
    role = _PLAIN_ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        return None
    own: JsonObject = {"newMessage": True} if role == previous_role else {}
    if isinstance(content, str):
        own = {"string": True, **own}
        return role, [built.message(role, (built.text_part(content),), extra={DIALECT: own})]
    if not isinstance(content, list) or not content:
        return None
    runs = _plain_runs(content, role, names, issuer)
    if runs is None:
        return None
    first_role, first_parts = runs[0]
    first = built.message(first_role, first_parts, extra={DIALECT: own} if own else None)
    return role, [first, *(built.message(kind, parts) for kind, parts in runs[1:])]


def _plain_runs(
    content: list[JsonValue], role: str, names: dict[str, str], issuer: str
) -> list[tuple[Role, tuple[Part, ...]]] | None:
    """``(role, parts)`` of each message a plain content list splits into (see
    :func:`_decode_content`), or ``None``; only an assistant's calls touch ``names``."""
    assistant = role == "assistant"
    runs: list[tuple[Role, tuple[Part, ...]]] = []
    run: list[Part] = []
    for block in content:
        if not assistant and isinstance(block, dict) and block.get("type") == "tool_result":
            call_id = block.get("tool_use_id")
            result = plain_result(block, names.get(call_id) if isinstance(call_id, str) else None)
            if result is None:
                return None
            if run:
                runs.append(("user", tuple(run)))
                run = []
            runs.append(("tool", (result,)))
            continue
        part = plain_block(block, assistant, issuer)
        if part is None:
            return None
        if part.kind == "tool_call":
            names[part.call_id] = part.name
        run.append(part)
    if run:
        runs.append(("assistant" if assistant else "user", tuple(run)))
    return runs


def _decode_content(
    content: JsonValue, path: str, role: str, names: dict[str, str], issuer: str
) -> list[Message]:
    if isinstance(content, str):
        parts: tuple[Part, ...] = (TextPart(text=content),)
        return [Message(role="assistant" if role == "assistant" else "user", parts=parts)]
    messages: list[Message] = []
    run: list[Part] = []
    canonical = "assistant" if role == "assistant" else "user"
    for position, item in enumerate(as_list(content, path)):
        where = f"{path}[{position}]"
        block = as_object(item, where)
        if block.get("type") == "tool_result" and role != "assistant":
            if run:
                messages.append(Message(role=canonical, parts=tuple(run)))
                run = []
            call_id = block.get("tool_use_id")
            name = names.get(call_id) if isinstance(call_id, str) else None
            messages.append(Message(role="tool", parts=(decode_result(block, where, name),)))
            continue
        part = decode_block(block, where, issuer)
        if part.kind == "tool_call":
            names[part.call_id] = part.name
        run.append(part)
    if run or not messages:
        messages.append(Message(role=canonical, parts=tuple(run)))
    return messages


@dataclass(slots=True)
class WireMessage:
    """One wire message being built, and the canonical message it started at."""

    role: str
    source: int
    blocks: list[JsonValue] = field(default_factory=list[JsonValue])
    fields: JsonObject = field(default_factory=dict[str, JsonValue])
    string: bool = False

    def payload(self) -> JsonObject:
        """The wire message (``content`` a string when it was one and still is one text)."""
        content: JsonValue = self.blocks
        only = self.blocks[0] if len(self.blocks) == 1 else None
        if self.string and isinstance(only, dict) and set(only) == {"type", "text"}:
            content = only["text"]
        return {"role": self.role, "content": content, **self.fields}


def encode_messages(
    messages: tuple[Message, ...], encoder: PartEncoder, policy: ReplayPolicy
) -> tuple[JsonValue, list[WireMessage]]:
    """``(system, wire messages)`` for ``messages``; raises before anything is sent."""
    system: list[JsonValue] = []
    system_string = False
    wire: list[WireMessage] = []
    for index, message in enumerate(messages):
        in_place = own_extra(message.extra).get("role") == "system" and bool(wire)
        if message.role in ("system", "developer") and not in_place:
            _system_message(message, index, bool(wire), encoder, policy)
            system.extend(_blocks(message, index, encoder))
            system_string = len(system) == 1 and bool(own_extra(message.extra).get("string"))
            continue
        role = "assistant" if message.role == "assistant" else "user"
        own = own_extra(message.extra)
        blocks = _blocks(message, index, encoder)
        role = str(own.get("role") or role)
        if wire and wire[-1].role == role and not own.get("newMessage"):
            wire[-1].blocks.extend(blocks)
            wire[-1].string = False
            continue
        fields = own.get("fields")
        wire.append(
            WireMessage(
                role=role,
                source=index,
                blocks=blocks,
                fields=dict(fields) if isinstance(fields, dict) else {},
                string=bool(own.get("string")),
            )
        )
    kept = _drop_emptied(wire, messages)
    if not system:
        return None, kept
    only = system[0]
    if system_string and isinstance(only, dict) and set(only) == {"type", "text"}:
        return only["text"], kept
    return system, kept


def _blocks(message: Message, index: int, encoder: PartEncoder) -> list[JsonValue]:
    blocks: list[JsonValue] = []
    for position, part in enumerate(message.parts):
        block = encoder.encode(part, f"messages[{index}].parts[{position}]")
        if block is not None:
            blocks.append(block)
    return blocks


def _drop_emptied(wire: list[WireMessage], messages: tuple[Message, ...]) -> list[WireMessage]:
    """Messages that lost every block in translation are not sent; neighbours then merge."""
    kept: list[WireMessage] = []
    for item in wire:
        if not item.blocks and messages[item.source].parts:
            continue
        merge = kept and kept[-1].role == item.role and item.blocks and kept[-1].blocks
        if merge and not own_extra(messages[item.source].extra).get("newMessage"):
            kept[-1].blocks.extend(item.blocks)
            kept[-1].string = False
            continue
        kept.append(item)
    return kept


def _system_message(
    message: Message, index: int, started: bool, encoder: PartEncoder, policy: ReplayPolicy
) -> None:
    """Report what the one top-level ``system`` slot changes about a system message."""
    if message.role == "developer":
        encoder.warn(
            "developer_as_system",
            f"messages[{index}]",
            "Anthropic has no developer role; the instructions are sent as system",
        )
    if not started:
        return
    reason = (
        "a system message after the conversation started has no place in Anthropic's "
        "top-level system prompt"
    )
    if policy.mode == "strict":
        raise LossyHistoryError(f"messages[{index}]", reason, code="system_moved")
    encoder.warn("system_moved", f"messages[{index}]", reason + "; moved there")

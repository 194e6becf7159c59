"""The messages a run's ``MESSAGES_SNAPSHOT`` carries, without rendering the whole thread
again on every run.

Every run ends with the thread as AG-UI messages (:func:`messages_to_agui`, cut to a window
by :func:`window_messages`); on a long thread rendering every message each run made a run
cost more the longer its thread. :class:`SnapshotMemo` remembers, per thread, each
message's rendering and its size, and renders only the messages that are not, by identity,
the remembered ones at the same position (messages are immutable; a rendering depends only
on the message, its position's fallback id, the seal key, the tenant and the approval
style, all part of what is compared). The result is the one :func:`messages_to_agui` and
:func:`window_messages` give, because the memo is used only where joining per-message
renderings is exactly that (and from a thread's second snapshot in this process on):

- every message has its own id (a message without one is shown as ``msg-<position>``);
- no rendering involves a ``confirm_changes`` call or answer, the one thing
  :func:`clean_confirm_changes` rewrites across messages (with none, it changes nothing);
- the whole thread fits the window's limit (then the window is all of it).

Otherwise the thread is rendered and windowed whole, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from interlock.codecs.agui import (
    CONFIRM_CHANGES_TOOL,
    compact_json,
    messages_to_agui,
    parse_confirm_changes_call_id,
    window_messages,
)
from interlock.gateway.config import ApprovalStyle
from interlock.gateway.stores import identical_prefix
from interlock.transcript import JsonObject, Message

MAX_MESSAGES = 20_000
"""Rendered messages one process remembers, over every thread (least recent forgotten)."""


@dataclass(frozen=True, slots=True)
class _Rendered:
    """One thread's last snapshot: its messages and each one's rendering and size."""

    seal_key: bytes
    style: ApprovalStyle
    messages: tuple[Message, ...]
    pieces: tuple[list[JsonObject], ...]
    sizes: tuple[int, ...]


class SnapshotMemo:
    """Per ``(tenant, thread)``, the renderings of its last snapshot (module docstring)."""

    def __init__(self, max_messages: int = MAX_MESSAGES) -> None:
        self.max_messages = max_messages
        self._entries: OrderedDict[tuple[str, str], _Rendered] = OrderedDict()
        self._held = 0
        self._first: OrderedDict[tuple[str, str], None] = OrderedDict()
        """Threads seen once (rendered whole, not remembered), oldest first."""

    def window(
        self,
        thread: tuple[str, str],
        messages: Sequence[Message],
        *,
        seal_key: bytes,
        style: ApprovalStyle,
        limit: int,
    ) -> tuple[list[JsonObject], int]:
        """``(messages shown, number left out)``, as :func:`window_messages` of
        :func:`messages_to_agui` gives them for ``thread`` (``(tenant, thread id)``)."""
        tenant = thread[0]
        if thread in self._entries or self._seen(thread):
            rendered = self._render(thread, messages, seal_key, style)
            if rendered is not None and sum(rendered.sizes) <= limit:
                return [piece for pieces in rendered.pieces for piece in pieces], 0
        whole = messages_to_agui(messages, seal_key=seal_key, tenant=tenant, approval_style=style)
        return window_messages(whole, limit)

    def _seen(self, thread: tuple[str, str]) -> bool:
        """Whether ``thread`` had a snapshot here before; noted now if not. A thread's
        first snapshot is rendered whole, as cheaply as before the memo: most threads
        of a busy process never have a second one."""
        if thread in self._first:
            del self._first[thread]
            return True
        self._first[thread] = None
        if len(self._first) > self.max_messages:
            self._first.popitem(last=False)
        return False

    def _render(
        self,
        thread: tuple[str, str],
        messages: Sequence[Message],
        seal_key: bytes,
        style: ApprovalStyle,
    ) -> _Rendered | None:
        """Each message's rendering, reusing the remembered ones of the longest prefix
        that is the remembered messages; ``None`` (and nothing remembered) where joining
        them would not be the whole rendering."""
        known = self._entries.pop(thread, None)
        if known is not None:
            self._held -= len(known.messages)
            if known.seal_key != seal_key or known.style != style:
                known = None
        shared = 0 if known is None else identical_prefix(known.messages, messages)
        pieces = list(known.pieces[:shared]) if known is not None else []
        sizes = list(known.sizes[:shared]) if known is not None else []
        for message in messages[shared:]:
            if message.id is None:
                return None
            alone = messages_to_agui(
                [message], seal_key=seal_key, tenant=thread[0], approval_style=style
            )
            if any(map(_confirms, alone)):
                return None
            pieces.append(alone)
            sizes.append(sum(len(_text(piece)) + 1 for piece in alone))
        rendered = _Rendered(seal_key, style, tuple(messages), tuple(pieces), tuple(sizes))
        self._remember(thread, rendered)
        return rendered

    def _remember(self, thread: tuple[str, str], rendered: _Rendered) -> None:
        if len(rendered.messages) > self.max_messages:
            return
        self._entries[thread] = rendered
        self._held += len(rendered.messages)
        while self._held > self.max_messages:
            _, oldest = self._entries.popitem(last=False)
            self._held -= len(oldest.messages)


def _text(piece: JsonObject) -> str:
    """What :func:`window_messages` measures a rendered message by (its ``json.dumps``)."""
    return compact_json(piece)


def _confirms(piece: JsonObject) -> bool:
    """A rendered message that is or holds a ``confirm_changes`` call or answer."""
    call_id = piece.get("toolCallId")
    if isinstance(call_id, str) and parse_confirm_changes_call_id(call_id) is not None:
        return True
    calls = piece.get("toolCalls")
    if not isinstance(calls, list):
        return False
    return any(
        isinstance(call, dict)
        and isinstance(function := call.get("function"), dict)
        and function.get("name") == CONFIRM_CHANGES_TOOL
        for call in calls
    )

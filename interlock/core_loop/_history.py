"""What a later model call sees: history projection and compaction grouping.

:func:`project_history` is the one place that decides which parts of a stored transcript
go back to a model. :func:`group_messages` finds the atomic groups compaction must keep or
drop whole. Both run in time linear in the transcript.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    Message,
    Part,
    ReasoningPart,
    ToolCallPart,
    ToolResultPart,
)


def project_history(
    messages: Sequence[Message], *, current_from: int | None = None
) -> tuple[Message, ...]:
    """The model-bound view of ``messages`` (whose calls and results carry occurrence ids).

    - A local or client call is sent only together with its terminal result, and that
      result is placed in a tool message right after the call's message (results in call
      order), wherever the caller's transcript had it. A call still pending (awaiting a
      decision, input or the client) is omitted, and so is the reasoning of a message whose
      calls are all omitted: an unrelated turn never shows the model an orphan call.
    - Results without a call in the transcript are omitted (they would be orphans).
    - Local approval wrappers and input requests/answers never reach a model.
    - A hosted approval request is kept while unanswered, or when its answer is part of the
      current input (messages from ``current_from`` on, default: none); a hosted answer is
      sent only from the current input. Resolved hosted pairs are inert afterwards.
    """
    current = len(messages) if current_from is None else current_from
    results: dict[str, ToolResultPart] = {}
    hosted_answered: dict[str, int] = {}
    plain: list[bool] = []
    for index, message in enumerate(messages):
        clean = True
        for part in message.parts:
            if type(part) in _SPECIAL:
                clean = False
                if isinstance(part, ToolResultPart):
                    occurrence = part.occurrence_id
                    if occurrence is not None and occurrence not in results:
                        results[occurrence] = part
                elif isinstance(part, ApprovalResponsePart):
                    hosted_answered[part.approval_id] = index
        plain.append(clean)
    hosted_requests: set[str] = set()
    out: list[Message] = []
    for index, message in enumerate(messages):
        if plain[index]:
            out.append(message)
            continue
        parts, follow = _project_parts(
            message, results, hosted_answered, hosted_requests, current, index
        )
        if len(parts) == len(message.parts) and not follow:
            out.append(message)
            continue
        if parts:
            out.append(replace(message, parts=tuple(parts)))
        if follow:
            out.append(Message(role="tool", parts=tuple(follow)))
    return tuple(out)


_SPECIAL: frozenset[type] = frozenset(
    {
        ToolCallPart,
        ToolResultPart,
        ApprovalRequestPart,
        ApprovalResponsePart,
        InputRequestPart,
        InputResponsePart,
    }
)
"""Part types the projection may change; a message without any is passed through."""


def _project_parts(
    message: Message,
    results: dict[str, ToolResultPart],
    hosted_answered: dict[str, int],
    hosted_requests: set[str],
    current: int,
    index: int,
) -> tuple[list[Part], list[Part]]:
    parts: list[Part] = []
    follow: list[Part] = []
    local_calls = kept_calls = 0
    for part in message.parts:
        if isinstance(part, ToolCallPart) and part.owner != "hosted":
            local_calls += 1
            result = results.get(part.occurrence_id or "")
            if result is not None:
                kept_calls += 1
                parts.append(part)
                follow.append(result)
        elif isinstance(part, ApprovalRequestPart):
            if part.call.owner == "hosted":
                hosted_requests.add(part.approval_id)
                if hosted_answered.get(part.approval_id, current) >= current:
                    parts.append(part)
        elif isinstance(part, ApprovalResponsePart):
            if part.approval_id in hosted_requests and index >= current:
                parts.append(part)
        elif not isinstance(part, ToolResultPart | InputRequestPart | InputResponsePart):
            parts.append(part)
    if local_calls and not kept_calls:
        parts = [part for part in parts if not isinstance(part, ReasoningPart)]
    return parts, follow


GroupKind: TypeAlias = Literal["system", "user", "assistant_text", "tool_call"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageGroup:
    """Messages compaction must keep or drop together (indexes in transcript order)."""

    kind: GroupKind
    indexes: tuple[int, ...]
    has_reasoning: bool = False


class _Pairing:
    """Pairs results with calls: by occurrence id when set, else by call id only when
    exactly one earlier call with that id is still open (ambiguity pairs nothing)."""

    def __init__(self) -> None:
        self.by_occurrence: dict[str, int] = {}
        self.open_by_call_id: defaultdict[str, list[int]] = defaultdict(list)

    def call(self, part: ToolCallPart, index: int) -> None:
        if part.occurrence_id is not None:
            self.by_occurrence[part.occurrence_id] = index
        else:
            self.open_by_call_id[part.call_id].append(index)

    def result(self, part: ToolResultPart) -> int | None:
        if part.occurrence_id is not None and part.occurrence_id in self.by_occurrence:
            return self.by_occurrence.pop(part.occurrence_id)
        open_calls = self.open_by_call_id.get(part.call_id)
        if open_calls is not None and len(open_calls) == 1:
            return open_calls.pop()
        return None


_CALL, _RESULT, _REASONING, _OTHER = 1, 2, 4, 8


def _flags(message: Message) -> int:
    flags = 0
    for part in message.parts:
        kind = type(part)
        if kind is ToolCallPart or kind is HostedToolPart:
            flags |= _CALL
        elif kind is ToolResultPart:
            flags |= _RESULT
        elif kind is ReasoningPart:
            flags |= _REASONING
        else:
            flags |= _OTHER
    return flags


class _Grouper:
    """Union-find over message indexes; the root of a group is its first message."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = messages
        self.flags = [_flags(message) for message in messages]
        self.parent = list(range(len(messages)))
        self.pairing = _Pairing()
        self.tail: int | None = None
        """The last message of the open tool-call run (adjacent tool messages join it)."""

    def root(self, index: int) -> int:
        parent = self.parent
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def join(self, first: int, second: int) -> None:
        a, b = self.root(first), self.root(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)

    def reasoning_only(self, index: int) -> bool:
        return self.flags[index] == _REASONING and self.messages[index].role == "assistant"

    def add(self, index: int) -> None:
        message, flags = self.messages[index], self.flags[index]
        if flags & _CALL and message.role == "assistant":
            back = index - 1
            while back >= 0 and self.reasoning_only(back):
                self.join(back, index)
                back -= 1
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    self.pairing.call(part, index)
            self.pair_results(message, index)
            self.tail = index
            return
        adjacent = self.tail is not None and self.tail == index - 1
        paired = bool(flags & _RESULT) and self.pair_results(message, index)
        if adjacent and not paired and (message.role == "tool" or self.reasoning_only(index)):
            assert self.tail is not None
            self.join(self.tail, index)
            paired = True
        self.tail = index if paired and message.role == "tool" else None

    def pair_results(self, message: Message, index: int) -> bool:
        paired = False
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                call_index = self.pairing.result(part)
                if call_index is not None:
                    self.join(call_index, index)
                    paired = True
        return paired


def group_messages(messages: Sequence[Message]) -> tuple[MessageGroup, ...]:
    """The atomic groups of a transcript, in order of their first message.

    A tool-call group holds the assistant message with the calls, the reasoning-only
    assistant messages just before and after it, the tool messages right after it, and
    every message holding one of its results (adjacent or not). Reused call ids are
    correct: a result closes its own occurrence (by occurrence id when set), a result
    before its call pairs with nothing, and a result that could belong to several open
    calls with the same id pairs with none.
    """
    grouper = _Grouper(messages)
    for index in range(len(messages)):
        grouper.add(index)
    members: dict[int, list[int]] = {}
    combined: dict[int, int] = {}
    for index in range(len(messages)):
        top = grouper.root(index)
        members.setdefault(top, []).append(index)
        combined[top] = combined.get(top, 0) | grouper.flags[index]
    return tuple(
        MessageGroup(
            kind=_kind(combined[top], messages[top].role),
            indexes=tuple(indexes),
            has_reasoning=bool(combined[top] & _REASONING),
        )
        for top, indexes in members.items()
    )


def _kind(flags: int, role: str) -> GroupKind:
    if flags & (_CALL | _RESULT):
        return "tool_call"
    if role in ("system", "developer"):
        return "system"
    return "user" if role == "user" else "assistant_text"


def keep_last_groups(messages: Sequence[Message], count: int) -> tuple[Message, ...]:
    """A sliding window: system groups plus the last ``count`` other groups, whole."""
    groups = group_messages(messages)
    others = [group for group in groups if group.kind != "system"]
    dropped = others[: max(len(others) - count, 0)]
    excluded = {index for group in dropped for index in group.indexes}
    return tuple(message for index, message in enumerate(messages) if index not in excluded)

"""What a later model call sees: history projection and compaction grouping.

:func:`project_history` is the one place that decides which parts of a stored transcript
go back to a model. :func:`group_messages` finds the atomic groups compaction must keep or
drop whole. Both run in time linear in the transcript, and both are on the path of every
model call, so they look at each message once with cheap type checks and copy runs of
untouched messages by slicing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Literal, NamedTuple, TypeAlias, cast

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
    messages: Sequence[Message],
    *,
    current_from: int | None = None,
    stored_hosted_requests: Collection[str] = (),
) -> tuple[Message, ...]:
    """The model-bound view of ``messages`` (whose calls and results carry occurrence ids).

    - A local or client call is sent only together with its terminal result, and that
      result is placed in a tool message right after the call's message (results in call
      order), wherever the caller's transcript had it. When the transcript holds several
      results for one occurrence, the last is its result (the loop's own result, appended
      after a caller's placeholder, supersedes it); the others are never sent. A call still pending (awaiting a
      decision, input or the client) is omitted, and so is the reasoning of a message whose
      calls are all omitted: an unrelated turn never shows the model an orphan call.
    - Results without a call in the transcript are omitted (they would be orphans).
    - Local approval wrappers and input requests/answers never reach a model.
    - A hosted approval request is kept while unanswered, or when its answer is part of the
      current input (messages from ``current_from`` on, default: none); a hosted answer is
      sent only from the current input. Resolved hosted pairs are inert afterwards.
    - ``stored_hosted_requests`` are hosted approval ids the service already holds (they
      were issued before ``messages``, which is then only the part sent under service-side
      continuation): a current answer to one of them is sent, without its request.

    Messages the projection does not change are returned as the same objects.
    """
    special = [
        index
        for index, message in enumerate(messages)
        if not _SPECIAL.isdisjoint(map(type, message.parts))
    ]
    if not special:
        return tuple(messages)
    projector = _Projector(
        messages, special, len(messages) if current_from is None else current_from
    )
    projector.hosted_requests.update(stored_hosted_requests)
    out: list[Message] = []
    start = 0
    for index in special:
        if start < index:
            out += messages[start:index]
        start = index + 1
        projector.project(index, out)
    out += messages[start:]
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

_NEVER_IN_PLACE: frozenset[type] = frozenset({ToolResultPart, InputRequestPart, InputResponsePart})
"""Part types never sent where they stand (results follow their call; input is control)."""


class _Projector:
    """Projects the messages holding special parts (see :func:`project_history`)."""

    def __init__(self, messages: Sequence[Message], special: list[int], current: int) -> None:
        self.messages = messages
        self.current = current
        self.results: dict[str, ToolResultPart] = {}
        """The last result of each occurrence, wherever it stands."""
        self.hosted_answered: dict[str, int] = {}
        """Approval id → index of the (last) message answering it."""
        self.hosted_requests: set[str] = set()
        """Hosted approval requests seen so far (an answer before its request is dropped)."""
        results, answered = self.results, self.hosted_answered
        for index in special:
            for part in messages[index].parts:
                if isinstance(part, ToolResultPart):
                    occurrence = part.occurrence_id
                    if occurrence is not None:
                        results[occurrence] = part
                elif isinstance(part, ApprovalResponsePart):
                    answered[part.approval_id] = index

    def project(self, index: int, out: list[Message]) -> None:
        """Append what message ``index`` contributes (itself, a copy, and/or results)."""
        message = self.messages[index]
        if _NEVER_IN_PLACE.issuperset(map(type, message.parts)):
            return  # results and input parts only: nothing to send where they stand
        parts, follow = self._parts(message, index)
        if len(parts) == len(message.parts):
            out.append(message)
        elif parts:
            out.append(replace(message, parts=tuple(parts)))
        if follow:
            out.append(self._tool_message(tuple(follow), index + 1))

    def _tool_message(self, results: tuple[Part, ...], after: int) -> Message:
        """``Message(role="tool", parts=results)``, reusing an equal message that follows."""
        if after < len(self.messages):
            candidate = self.messages[after]
            if (
                candidate.role == "tool"
                and candidate.parts == results
                and candidate.id is None
                and candidate.name is None
                and not candidate.extra
            ):
                return candidate
        return Message(role="tool", parts=results)

    def _parts(self, message: Message, index: int) -> tuple[list[Part], list[Part]]:
        parts: list[Part] = []
        follow: list[Part] = []
        local_calls = kept_calls = 0
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.owner != "hosted":
                local_calls += 1
                result = self.results.get(part.occurrence_id or "")
                if result is not None:
                    kept_calls += 1
                    parts.append(part)
                    follow.append(result)
            elif isinstance(part, ApprovalRequestPart):
                if part.call.owner == "hosted":
                    self.hosted_requests.add(part.approval_id)
                    if self.hosted_answered.get(part.approval_id, self.current) >= self.current:
                        parts.append(part)
            elif isinstance(part, ApprovalResponsePart):
                if part.approval_id in self.hosted_requests and index >= self.current:
                    parts.append(part)
            elif type(part) not in _NEVER_IN_PLACE:
                parts.append(part)
        if local_calls and not kept_calls:
            parts = [part for part in parts if not isinstance(part, ReasoningPart)]
        return parts, follow


GroupKind: TypeAlias = Literal["system", "user", "assistant_text", "tool_call"]


class MessageGroup(NamedTuple):
    """Messages compaction must keep or drop together (indexes in transcript order).

    A named tuple rather than a frozen dataclass: a long transcript yields a group for
    most of its messages, and a tuple is several times cheaper to build.
    """

    kind: GroupKind
    indexes: tuple[int, ...]
    has_reasoning: bool = False


_CALL, _RESULT, _REASONING, _OTHER = 1, 2, 4, 8
_LINKS = _CALL | _RESULT
_FLAG: dict[type, int] = {
    ToolCallPart: _CALL,
    HostedToolPart: _CALL,
    ToolResultPart: _RESULT,
    ReasoningPart: _REASONING,
}
_ROLE_KIND: dict[str, GroupKind] = {"system": "system", "developer": "system", "user": "user"}


def _flags(message: Message) -> int:
    parts = message.parts
    if len(parts) == 1:
        return _FLAG.get(type(parts[0]), _OTHER)
    flags = 0
    for part in parts:
        flags |= _FLAG.get(type(part), _OTHER)
    return flags


def _root(parent: list[int], index: int) -> int:
    while parent[index] != index:
        parent[index] = parent[parent[index]]
        index = parent[index]
    return index


def _join(parent: list[int], first: int, second: int) -> None:
    a, b = _root(parent, first), _root(parent, second)
    if a != b:
        parent[max(a, b)] = min(a, b)


class _Pairing:
    """Pairs results with calls: by occurrence id when set, else by call id only when
    exactly one earlier call with that id is still open (ambiguity pairs nothing)."""

    def __init__(self, parent: list[int]) -> None:
        self.parent = parent
        self.by_occurrence: dict[str, int] = {}
        self.open_by_call_id: dict[str, list[int]] = {}

    def calls(self, message: Message, index: int) -> None:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                if part.occurrence_id is not None:
                    self.by_occurrence[part.occurrence_id] = index
                else:
                    self.open_by_call_id.setdefault(part.call_id, []).append(index)

    def results(self, message: Message, index: int) -> bool:
        """Join each result of the message to its call's group; True if any paired."""
        paired = False
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                occurrence = part.occurrence_id
                if occurrence is not None and occurrence in self.by_occurrence:
                    _join(self.parent, self.by_occurrence.pop(occurrence), index)
                    paired = True
                    continue
                open_calls = self.open_by_call_id.get(part.call_id)
                if open_calls is not None and len(open_calls) == 1:
                    _join(self.parent, open_calls.pop(), index)
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
    flags = [_flags(message) for message in messages]
    parent = list(range(len(messages)))
    pairing = _Pairing(parent)
    tail = -2
    """The last message of the open tool-call run (adjacent tool messages join it)."""
    for index, message in enumerate(messages):
        flag, role = flags[index], message.role
        if flag & _CALL and role == "assistant":
            if index and flags[index - 1] == _REASONING:
                _join_reasoning_before(messages, flags, parent, index)
            pairing.calls(message, index)
            if flag & _RESULT:
                pairing.results(message, index)
            tail = index
            continue
        paired = bool(flag & _RESULT) and pairing.results(message, index)
        if (
            not paired
            and tail == index - 1
            and (role == "tool" or (flag == _REASONING and role == "assistant"))
        ):
            _join(parent, tail, index)
            paired = True
        tail = index if paired and role == "tool" else -2
    return _collect(messages, flags, parent)


def _join_reasoning_before(
    messages: Sequence[Message], flags: list[int], parent: list[int], index: int
) -> None:
    """Reasoning-only assistant messages right before a call message join its group."""
    back = index - 1
    while back >= 0 and flags[back] == _REASONING and messages[back].role == "assistant":
        _join(parent, back, index)
        back -= 1


def _collect(
    messages: Sequence[Message], flags: list[int], parent: list[int]
) -> tuple[MessageGroup, ...]:
    """The groups, from the union-find forest: one per root, members in index order."""
    members: dict[int, list[int]] = {}
    for index in [index for index, up in enumerate(parent) if up != index]:
        top = _root(parent, index)
        found = members.get(top)
        if found is None:
            members[top] = [top, index]
        else:
            found.append(index)
    groups: list[MessageGroup] = []
    for top in [index for index, up in enumerate(parent) if up == index]:
        indexes = members.get(top)
        if indexes is None:
            combined = flags[top]
            group_indexes: tuple[int, ...] = (top,)
        else:
            combined = 0
            for index in indexes:
                combined |= flags[index]
            group_indexes = tuple(indexes)
        kind = _kind(combined, messages[top].role)
        groups.append(_new_group(MessageGroup, (kind, group_indexes, combined & _REASONING != 0)))
    return tuple(groups)


_new_group = cast(
    "Callable[[type[MessageGroup], tuple[GroupKind, tuple[int, ...], bool]], MessageGroup]",
    tuple[object, ...].__new__,
)
"""``MessageGroup(...)`` without the keyword-argument wrapper (the hot path of grouping)."""


def _kind(flags: int, role: str) -> GroupKind:
    if flags & _LINKS:
        return "tool_call"
    return _ROLE_KIND.get(role, "assistant_text")


def keep_last_groups(messages: Sequence[Message], count: int) -> tuple[Message, ...]:
    """A sliding window: system groups plus the last ``count`` other groups, whole."""
    groups = group_messages(messages)
    others = [group for group in groups if group.kind != "system"]
    dropped = others[: max(len(others) - count, 0)]
    excluded = {index for group in dropped for index in group.indexes}
    return tuple(message for index, message in enumerate(messages) if index not in excluded)

"""Which approvals of a history belong to the service and which to the local loop."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from interlock.transcript._messages import Message
from interlock.transcript._parts import ApprovalRequestPart


@dataclass(frozen=True, slots=True)
class ApprovalIds:
    """The approval ids of one history, split by the owner of the call they ask about.

    A decision belongs to whichever request of the same history it answers; one answering no
    request of the history is neither (encoders report it rather than guess).
    """

    hosted: frozenset[str] = frozenset()
    local: frozenset[str] = frozenset()

    @classmethod
    def of(cls, messages: Iterable[Message]) -> ApprovalIds:
        """Collect the approval requests of ``messages`` by the owner of their call."""
        hosted: set[str] = set()
        local: set[str] = set()
        for message in messages:
            for part in message.parts:
                if isinstance(part, ApprovalRequestPart):
                    (hosted if part.call.owner == "hosted" else local).add(part.approval_id)
        return cls(hosted=frozenset(hosted), local=frozenset(local))

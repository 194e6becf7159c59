"""``claim_decisions`` without held batches or decisions takes a short path
(``_nothing_to_claim``): for every transcript it is taken on, it gives the resumption the
full check (``_claim``) gives, with the same occurrence ids minted, and makes no store
write."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.core_loop import DecisionRefusedError, InMemoryLedgerStore, sequential_ids
from interlock.core_loop._agent import IdSource
from interlock.core_loop._decisions import _claim, _decides, _nothing_to_claim, claim_decisions
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    InputResponsePart,
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


@dataclass
class _Run:
    ledger: InMemoryLedgerStore
    thread_id: str
    ids: IdSource
    exclusive: bool = True


_IDS = st.sampled_from(["c1", "c2", "c3"])
_OCCURRENCES = st.one_of(st.none(), st.sampled_from(["occ-a", "occ-b"]))
_CALL = st.builds(
    ToolCallPart,
    call_id=_IDS,
    name=st.sampled_from(["f", "g"]),
    arguments=st.just("{}"),
    occurrence_id=_OCCURRENCES,
    owner=st.sampled_from(["local", "client", "hosted"]),
)
_PART: st.SearchStrategy[Part] = st.one_of(
    st.builds(TextPart, text=st.text(max_size=5)),
    _CALL,
    st.builds(
        ToolResultPart,
        call_id=_IDS,
        output=st.just((TextPart(text="r"),)),
        occurrence_id=_OCCURRENCES,
    ),
    st.builds(ApprovalRequestPart, approval_id=_IDS, call=_CALL),
    st.builds(ApprovalResponsePart, approval_id=_IDS, approved=st.booleans()),
    st.builds(InputResponsePart, request_id=_IDS, value=st.integers()),
)
_MESSAGE = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool"]),
    parts=st.lists(_PART, max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MESSAGE, max_size=6), st.booleans())
def test_the_short_path_gives_what_the_full_check_gives(
    messages: list[Message], continuing: bool
) -> None:
    if _decides(messages):
        return  # the full check runs (and may refuse): nothing to compare

    async def both() -> None:
        short_run = _Run(InMemoryLedgerStore(), "t", sequential_ids())
        full_run = _Run(InMemoryLedgerStore(), "t", sequential_ids())
        short = _nothing_to_claim(short_run, messages)
        full = await _claim(full_run, messages, continuing, ())
        assert short == full
        assert short_run.ids("next") == full_run.ids("next")  # as many ids minted

    asyncio.run(both())


def test_claim_decisions_takes_the_full_check_when_the_input_decides() -> None:
    run = _Run(InMemoryLedgerStore(), "t", sequential_ids())
    decision = ApprovalResponsePart(approval_id="a1", approved=True)
    with pytest.raises(DecisionRefusedError) as refused:
        asyncio.run(claim_decisions(run, [Message(role="user", parts=(decision,))], False))
    assert refused.value.code == "unknown_approval"

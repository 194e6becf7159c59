"""A store key's component is what ``quote(part, safe="")`` writes, for every text: the
fast paths (plain parts, ASCII by one translate) never differ from ``quote``."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.stores._ledger import KeyValueLedgerStore
from interlock.gateway.stores._quote import quoted
from interlock.gateway.stores.memory import MemoryBackend

_PARTS = st.one_of(
    st.text(),
    st.text(alphabet="abcXYZ019_.~:-/% "),
    st.text(alphabet=st.characters(max_codepoint=127)),
)


@settings(deadline=None)
@given(_PARTS)
def test_quoted_is_quote_with_nothing_safe(part: str) -> None:
    assert quoted(part) == quote(part, safe="")


@settings(deadline=None)
@given(_PARTS, _PARTS, _PARTS)
def test_a_ledger_key_quotes_each_component(tenant: str, thread: str, part: str) -> None:
    ledger = KeyValueLedgerStore(MemoryBackend(), tenant)
    expected = "/".join(
        ["ledger", quote(tenant, safe=""), quote(thread, safe=""), "batch", quote(part, safe="")]
    )
    assert ledger._key(thread, "batch", part) == expected  # pyright: ignore[reportPrivateUsage]

"""The upstream headers an answer passes on are those ``passed_headers`` picks, for any
header list (case, repeats, prefixes, bytes that are not ASCII)."""

from __future__ import annotations

import httpx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from interlock.gateway.headers import passed_headers
from interlock.gateway.proxy_call import answer_headers

NAMES = st.sampled_from(
    [
        b"x-request-id",
        b"Request-Id",
        b"RETRY-AFTER",
        b"retry-after-ms",
        b"x-ratelimit-limit-requests",
        b"X-RateLimit-Remaining-Tokens",
        b"x-ratelimit-",
        b"content-type",
        b"x-ratelimits",
        b"date",
    ]
) | st.binary(min_size=1, max_size=6).filter(
    lambda name: b":" not in name and b"\r" not in name and b"\n" not in name
)
VALUES = st.binary(max_size=8).filter(lambda value: b"\r" not in value and b"\n" not in value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMES, VALUES), max_size=8))
@example([(b"X-RATELIMIT-\xc9", b"1"), (b"x-request-id", b"a")])
@example([(b"x-request-id", b"caf\xe9"), (b"x-request-id", b"b")])
def test_answer_headers_are_the_passed_headers(raw: list[tuple[bytes, bytes]]) -> None:
    response = httpx.Response(200, headers=raw)
    expected = passed_headers(httpx.Response(200, headers=raw).headers.multi_items())
    assert answer_headers(response) == expected
    assert list(answer_headers(response)) == list(expected)  # and in the same order

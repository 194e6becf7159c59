"""Reading request bodies: a one-piece body is handed on as itself; pieces are joined; the
limit holds whether the size is declared or only found while reading."""

from __future__ import annotations

import pytest
from starlette.requests import ClientDisconnect, Request
from starlette.types import Message

from interlock.gateway.bodies import ProxyError, read_body


def request(pieces: list[bytes], headers: list[tuple[bytes, bytes]] | None = None) -> Request:
    """A Starlette request whose body arrives as ``pieces`` (ASGI ``http.request`` messages)."""
    messages: list[Message] = [
        {"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1}
        for index, piece in enumerate(pieces)
    ]

    async def receive() -> Message:
        return messages.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers or []}
    return Request(scope, receive)


async def test_a_body_in_one_piece_is_that_piece_uncopied() -> None:
    body = b"x" * 200_000
    assert await read_body(request([body]), 10**6) is body
    assert await read_body(request([b"", body, b""]), 10**6) is body


async def test_pieces_are_joined_in_order() -> None:
    assert await read_body(request([b"ab", b"", b"cd", b"e"]), 10) == b"abcde"
    assert await read_body(request([b""]), 10) == b""


@pytest.mark.parametrize(
    ("pieces", "headers"),
    [
        ([b"x" * 6, b"y" * 6], []),
        ([b"x" * 4], [(b"content-length", b"11")]),
    ],
)
async def test_a_body_over_the_limit_is_a_413(
    pieces: list[bytes], headers: list[tuple[bytes, bytes]]
) -> None:
    with pytest.raises(ProxyError) as refused:
        await read_body(request(pieces, headers), 10)
    assert (refused.value.status, refused.value.code) == (413, "too_large")


async def test_a_client_leaving_mid_body_is_a_client_disconnect() -> None:
    """As Starlette's ``Request.stream()`` reports it (the proxy answers 499)."""
    messages: list[Message] = [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> Message:
        return messages.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    with pytest.raises(ClientDisconnect):
        await read_body(Request(scope, receive), 10)
    assert not messages

"""The upstream HTTP/1.1 transport against a scripted loopback server (real sockets)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway import http1
from interlock.gateway.http1 import KEEPALIVE_EXPIRY, Http1Transport

OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


@dataclass
class Exchange:
    """One request as the server read it, with the connection it came on."""

    connection: int
    head: bytes
    body: bytes


Script = Callable[[Exchange, asyncio.StreamWriter], Awaitable[bool]]
"""Answers one exchange; returns False to close the connection afterwards."""


@dataclass
class Server:
    script: Script
    exchanges: list[Exchange] = field(default_factory=list[Exchange])
    connections: int = 0
    closed_by_client: int = 0
    finished: int = 0
    """Connections the server itself closed after answering."""
    url: str = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    self.closed_by_client += 1
                    return
                body = await _read_body(reader, head)
                exchange = Exchange(number, head, body)
                self.exchanges.append(exchange)
                if not await self.script(exchange, writer):
                    await writer.drain()
                    self.finished += 1
                    return
                await writer.drain()
        finally:
            writer.close()


async def _read_body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    lines = head.decode().lower().split("\r\n")
    if "transfer-encoding: chunked" in lines:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            body += (await reader.readexactly(size + 2))[:-2]
            if size == 0:
                return body
    length = next(
        (int(line.split(":")[1]) for line in lines if line.startswith("content-length")), 0
    )
    return await reader.readexactly(length)


@contextlib.asynccontextmanager
async def serving(script: Script) -> AsyncIterator[Server]:
    server = Server(script)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    server.url = f"http://127.0.0.1:{port}"
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


async def ok(_: Exchange, writer: asyncio.StreamWriter) -> bool:
    writer.write(OK)
    return True


def client(server: Server, **options: float) -> httpx.AsyncClient:
    transport = Http1Transport(max_connections=int(options.pop("max_connections", 10)))
    timeout = httpx.Timeout(
        5.0, read=options.pop("read_timeout", 5.0), pool=options.pop("pool_timeout", 5.0)
    )  # one short timeout at a time: a 0.05 s connect limit fails on a loaded machine
    assert not options, f"unknown client options {options}"
    return httpx.AsyncClient(transport=transport, base_url=server.url, timeout=timeout)


async def test_keep_alive_reuses_one_connection_and_sends_one_buffer() -> None:
    async with serving(ok) as server, client(server) as http:
        for _ in range(3):
            answer = await http.post("/v1/x?a=1", content=b'{"q":1}')
            assert answer.status_code == 200
            assert answer.json() == {}
    assert server.connections == 1
    assert [exchange.body for exchange in server.exchanges] == [b'{"q":1}'] * 3
    assert server.exchanges[0].head.startswith(b"POST /v1/x?a=1 HTTP/1.1\r\n")


async def test_a_chunked_answer_streams_piece_by_piece() -> None:
    second = asyncio.Event()

    async def chunks(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await writer.drain()
        await second.wait()  # only sent once the client has the first piece
        writer.write(b"6\r\nsecond\r\n0\r\n\r\n")
        return True

    async with serving(chunks) as server, client(server) as http:
        async with http.stream("POST", "/s", content=b"{}") as answer:
            pieces: list[bytes] = []
            async for piece in answer.aiter_raw():
                pieces.append(piece)
                second.set()
        assert pieces == [b"first", b"second"]
        assert (await http.post("/s", content=b"{}")).status_code == 200
    assert server.connections == 1


async def test_a_body_delimited_by_close_is_read_to_the_end_and_not_reused() -> None:
    async def until_close(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it")
        return False

    async with serving(until_close) as server, client(server) as http:
        assert (await http.post("/", content=b"1")).content == b"all of it"
        assert (await http.post("/", content=b"2")).content == b"all of it"
    assert server.connections == 2


async def test_a_request_the_server_received_is_never_sent_again() -> None:
    async def drop_second(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.body == b"2" and exchange.connection == 1:
            return False  # the keep-alive race: closed as the request arrived
        writer.write(OK)
        return True

    async with serving(drop_second) as server, client(server) as http:
        assert (await http.post("/", content=b"1")).status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):  # it may have been processed
            await http.post("/", content=b"2")
        assert (await http.post("/", content=b"3")).status_code == 200
    assert [(e.connection, e.body) for e in server.exchanges] == [(1, b"1"), (1, b"2"), (2, b"3")]


async def test_a_connection_closed_while_idle_is_replaced_before_anything_is_written() -> None:
    async def one_per_connection(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)  # keep-alive announced, then the server closes the idle connection
        return False

    async with serving(one_per_connection) as server, client(server) as http:
        assert (await http.post("/", content=b"1")).status_code == 200
        for _ in range(200):  # until the transport has seen the close
            await asyncio.sleep(0.005)
            if server.finished:
                await asyncio.sleep(0.01)
                break
        assert (await http.post("/", content=b"2")).status_code == 200
    assert [(e.connection, e.body) for e in server.exchanges] == [(1, b"1"), (2, b"2")]


async def test_an_answer_head_over_the_limit_is_refused() -> None:
    async def huge_head(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n")
        for index in range(200):
            writer.write(b"x-filler-%d: %s\r\n" % (index, b"y" * 100))
            await writer.drain()
        writer.write(b"content-length: 2\r\n\r\n{}")
        return True

    async with serving(huge_head) as server:
        transport = Http1Transport(max_header_bytes=4096)
        async with httpx.AsyncClient(transport=transport, base_url=server.url) as http:
            with pytest.raises(http1.AnswerHeadTooLarge):
                await http.post("/", content=b"1")
        assert server.connections == 1  # the refused connection is not kept


async def test_idle_connections_close_within_the_expiry_without_further_traffic() -> None:
    release = asyncio.Event()

    async def slow(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        await release.wait()
        writer.write(OK)
        return True

    async with serving(slow) as server:
        transport = Http1Transport(keepalive_expiry=0.2)
        async with httpx.AsyncClient(transport=transport, base_url=server.url) as http:
            burst = [asyncio.ensure_future(http.post("/", content=b"x")) for _ in range(8)]
            for _ in range(2000):
                if len(server.exchanges) == 8:
                    break
                await asyncio.sleep(0.005)
            release.set()
            assert all(answer.status_code == 200 for answer in await asyncio.gather(*burst))
            assert server.connections == 8
            for _ in range(300):  # nothing else is sent: only the expiry can close them
                if server.closed_by_client == 8:
                    break
                await asyncio.sleep(0.01)
            assert server.closed_by_client == 8


async def test_a_fresh_connection_closed_without_an_answer_is_an_error() -> None:
    async def hang_up(_: Exchange, __: asyncio.StreamWriter) -> bool:
        return False

    async with serving(hang_up) as server, client(server) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post("/", content=b"1")
    assert len(server.exchanges) == 1  # never sent twice on a fresh connection


async def test_connection_refused_is_a_connect_error() -> None:
    async with serving(ok) as server:
        url = server.url
    async with httpx.AsyncClient(transport=Http1Transport(), base_url=url) as http:
        with pytest.raises(httpx.ConnectError):
            await http.post("/", content=b"1")


async def test_no_answer_in_time_is_a_read_timeout() -> None:
    release = asyncio.Event()

    async def silent(_: Exchange, __: asyncio.StreamWriter) -> bool:
        await release.wait()
        return False

    async with serving(silent) as server, client(server, read_timeout=0.05) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.post("/", content=b"1")
        release.set()


async def test_a_connection_lost_mid_body_is_a_read_error() -> None:
    async def truncated(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this")
        return False

    async with serving(truncated) as server, client(server) as http:
        with pytest.raises(httpx.ReadError):
            await http.post("/", content=b"1")


async def test_a_malformed_answer_is_a_protocol_error() -> None:
    async def garbage(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        return True

    async with serving(garbage) as server, client(server) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post("/", content=b"1")


async def test_the_pool_bounds_open_exchanges() -> None:
    async with serving(ok) as server, client(server, max_connections=1, pool_timeout=0.05) as http:
        held = await http.send(http.build_request("POST", "/", content=b"1"), stream=True)
        with pytest.raises(httpx.PoolTimeout):
            await http.post("/", content=b"2")
        await held.aclose()
        assert (await http.post("/", content=b"3")).status_code == 200


async def test_an_answer_closed_before_its_end_does_not_reuse_the_connection() -> None:
    async def long_answer(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n")
        return True

    async with serving(long_answer) as server, client(server) as http:
        async with http.stream("POST", "/", content=b"1") as answer:
            async for _ in answer.aiter_raw():
                break
        async with http.stream("POST", "/", content=b"2") as answer:
            async for _ in answer.aiter_raw():
                break
    assert server.connections == 2


async def test_informational_answers_are_skipped() -> None:
    async def hints(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + OK)
        return True

    async with serving(hints) as server, client(server) as http:
        answer = await http.post("/", content=b"1")
        assert (answer.status_code, answer.content) == (200, b"{}")
        assert "link" not in answer.headers
        assert (await http.post("/", content=b"2")).status_code == 200
    assert server.connections == 1


async def test_a_streamed_request_body_goes_out_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b'{"a":'
        yield b"1}"

    async with serving(ok) as server, client(server) as http:
        assert (await http.post("/", content=parts())).status_code == 200
    assert server.exchanges[0].body == b'{"a":1}'


async def test_a_large_answer_arrives_whole_through_read_pauses() -> None:
    size = 4 * http1.READ_HIGH_WATER

    async def large(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size + b"x" * size)
        return True

    async with serving(large) as server, client(server) as http:
        async with http.stream("POST", "/", content=b"1") as answer:
            received = 0
            async for piece in answer.aiter_raw():
                received += len(piece)
                await asyncio.sleep(0)  # a slow consumer
        assert received == size
        assert (await http.post("/", content=b"2")).status_code == 200
    assert server.connections == 1


async def test_closing_the_transport_closes_idle_connections() -> None:
    async with serving(ok) as server:
        async with client(server) as http:
            await http.post("/", content=b"1")
        for _ in range(100):
            if server.closed_by_client:
                break
            await asyncio.sleep(0.01)
        assert server.closed_by_client == 1


def test_the_same_exchanges_work_on_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> None:
        await test_keep_alive_reuses_one_connection_and_sends_one_buffer()
        await test_a_chunked_answer_streams_piece_by_piece()
        await test_a_request_the_server_received_is_never_sent_again()
        await test_a_connection_closed_while_idle_is_replaced_before_anything_is_written()

    uvloop.run(main())


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_https_verifies_the_server_and_reuses_the_connection(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    server = Server(ok)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=server_context)
    port = listener.sockets[0].getsockname()[1]
    trusting = Http1Transport(ssl_context=ssl.create_default_context(cafile=str(cert)))
    try:
        async with httpx.AsyncClient(transport=trusting) as http:
            for _ in range(2):
                answer = await http.post(f"https://127.0.0.1:{port}/v1/x", content=b"{}")
                assert answer.status_code == 200
        assert server.connections == 1
        async with httpx.AsyncClient(transport=Http1Transport()) as http:
            with pytest.raises(httpx.ConnectError):  # the default CAs do not know this one
                await http.post(f"https://127.0.0.1:{port}/v1/x", content=b"{}")
    finally:
        listener.close()
        await listener.wait_closed()


async def test_expired_idle_connections_close_when_another_is_released() -> None:
    async with serving(ok) as server:
        transport = Http1Transport(keepalive_expiry=0.05)
        async with httpx.AsyncClient(transport=transport, base_url=server.url) as http:
            first = await http.send(http.build_request("POST", "/", content=b"1"), stream=True)
            second = await http.send(http.build_request("POST", "/", content=b"2"), stream=True)
            await first.aread()  # idle from here on
            await asyncio.sleep(0.1)
            await second.aread()  # released: the first, idle past its expiry, is closed
            for _ in range(100):
                if server.closed_by_client:
                    break
                await asyncio.sleep(0.01)
            assert (server.connections, server.closed_by_client) == (2, 1)


def test_idle_connections_expire_before_common_servers_close_them() -> None:
    """A request written as the server closes its idle connection would be a 502 (never
    resent): the default reuse window ends before uvicorn's default keep-alive timeout."""
    assert uvicorn.Config(app=None).timeout_keep_alive > KEEPALIVE_EXPIRY  # type: ignore[arg-type]  # no app needed to read a default


_HEADER_BYTES = st.binary(min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_HEADER_BYTES, _HEADER_BYTES), max_size=6))
def test_answer_headers_are_what_httpx_makes_of_the_same_pairs(
    pairs: list[tuple[bytes, bytes]],
) -> None:
    names = [name for name, _ in pairs]
    made = [(name, name.lower(), value) for name, value in pairs]
    ascii_head = b"".join(names + [value for _, value in pairs]).isascii()
    lean = http1.AnswerHeaders(made, ascii_head)
    stock = httpx.Headers(pairs)
    assert lean.raw == stock.raw and lean.encoding == stock.encoding
    assert list(lean.multi_items()) == list(stock.multi_items()) and lean == stock
    for name, _ in pairs:
        key = name.decode(stock.encoding)
        assert lean.get_list(key) == stock.get_list(key)


async def test_a_head_over_the_limit_in_one_piece_is_refused() -> None:
    """The whole head, over the limit, in one write with its body (no partial head is
    ever counted): the answer is still refused and its connection closed."""

    async def one_piece(_: Exchange, writer: asyncio.StreamWriter) -> bool:
        filler = b"".join(b"x-filler-%d: %s\r\n" % (index, b"y" * 100) for index in range(60))
        writer.write(b"HTTP/1.1 200 OK\r\n" + filler + b"content-length: 2\r\n\r\n{}")
        return True

    async with serving(one_piece) as server:
        transport = Http1Transport(max_header_bytes=4096)
        async with httpx.AsyncClient(transport=transport, base_url=server.url) as http:
            with pytest.raises(http1.AnswerHeadTooLarge):
                await http.post("/", content=b"1")
            with pytest.raises(http1.AnswerHeadTooLarge):
                await http.post("/", content=b"2")
        assert server.connections == 2  # each refused connection was closed, not kept


async def test_pool_slots_go_to_waiters_in_order_and_survive_cancellation() -> None:
    slots = http1._Slots(1)  # pyright: ignore[reportPrivateUsage]
    assert slots.take() and not slots.take()
    order: list[str] = []

    async def waiting(name: str, within: float | None) -> None:
        await slots.wait(within)
        order.append(name)

    first = asyncio.ensure_future(waiting("first", None))
    cancelled = asyncio.ensure_future(waiting("cancelled", None))
    timed_out = asyncio.ensure_future(waiting("timed out", 0.01))
    last = asyncio.ensure_future(waiting("last", None))
    await asyncio.sleep(0.05)
    with pytest.raises(TimeoutError):
        await timed_out
    cancelled.cancel()
    slots.release()  # to "first"
    await first
    slots.release()  # "cancelled" is gone: to "last"
    await last
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert order == ["first", "last"]
    slots.release()
    assert slots.value == 1 and not slots.waiters


async def test_a_slot_handed_to_a_waiter_that_was_just_cancelled_passes_on() -> None:
    slots = http1._Slots(1)  # pyright: ignore[reportPrivateUsage]
    assert slots.take()
    gone = asyncio.ensure_future(slots.wait(None))
    after = asyncio.ensure_future(slots.wait(None))
    await asyncio.sleep(0)
    slots.release()  # handed to "gone" ...
    gone.cancel()  # ... which is cancelled before it runs again
    with pytest.raises(asyncio.CancelledError):
        await gone
    await asyncio.wait_for(after, 1)  # the slot went on to the next waiter
    assert slots.value == 0

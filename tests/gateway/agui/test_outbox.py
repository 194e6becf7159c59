"""The run's outbox: order, batches, the bound a slow client puts on its run, close, stall."""

from __future__ import annotations

import asyncio

from interlock.gateway.agui import Outbox


async def settle() -> None:
    """Let every task that can run do so."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_frames_come_out_in_order_as_one_batch() -> None:
    outbox = Outbox(limit=1000)
    await outbox.put(["a", "b"])
    await outbox.put(["c"])
    assert outbox.size == 3
    assert await outbox.take() == ["a", "b", "c"]
    assert outbox.size == 0


async def test_the_end_comes_after_every_frame() -> None:
    outbox = Outbox(limit=1000)
    await outbox.put(["a"])
    outbox.end()
    assert await outbox.take() == ["a"]
    assert await outbox.take() is None


async def test_a_waiting_consumer_wakes_on_a_frame() -> None:
    outbox = Outbox(limit=1000)
    taking = asyncio.create_task(outbox.take())
    await settle()
    assert not taking.done()
    await outbox.put(["a"])
    assert await taking == ["a"]


async def test_a_full_outbox_makes_the_producer_wait_until_the_consumer_takes() -> None:
    outbox = Outbox(limit=10)
    await outbox.put(["0123456789"])  # now full
    putting = asyncio.create_task(outbox.put(["x"]))
    await settle()
    assert not putting.done()
    assert outbox.waiting
    assert outbox.size == 10  # nothing beyond the limit was queued
    assert await outbox.take() == ["0123456789"]
    await putting
    assert await outbox.take() == ["x"]
    assert not outbox.waiting


async def test_what_is_held_never_exceeds_the_limit_plus_one_put() -> None:
    outbox = Outbox(limit=100)
    produced = 0

    async def produce() -> None:
        nonlocal produced
        for _ in range(1000):
            await outbox.put(["x" * 30])
            produced += 1

    producer = asyncio.create_task(produce())
    await settle()
    assert outbox.size <= 100 + 30
    assert produced < 10  # the producer was held back, not the 1,000 frames queued
    while not producer.done():
        assert outbox.size <= 100 + 30
        await outbox.take()
        await settle()
    assert produced == 1000


async def test_close_unblocks_the_producer_and_discards_from_then_on() -> None:
    outbox = Outbox(limit=1)
    await outbox.put(["ab"])
    putting = asyncio.create_task(outbox.put(["c"]))
    await settle()
    outbox.close()
    await putting
    await outbox.put(["d"])
    assert outbox.closed
    assert outbox.size == 0
    assert await outbox.take() is None


async def test_close_wakes_a_waiting_consumer() -> None:
    outbox = Outbox(limit=10)
    taking = asyncio.create_task(outbox.take())
    await settle()
    outbox.close()
    assert await taking is None


async def test_a_cancelled_take_loses_no_frame() -> None:
    outbox = Outbox(limit=10)
    taking = asyncio.create_task(outbox.take())
    await settle()
    taking.cancel()
    await asyncio.gather(taking, return_exceptions=True)
    await outbox.put(["a"])
    assert await outbox.take() == ["a"]


async def test_a_consumer_that_takes_nothing_for_the_stall_limit_counts_as_gone() -> None:
    outbox = Outbox(limit=1, stall_seconds=0.01)
    await outbox.put(["ab"])
    await outbox.put(["c"])  # waits, then gives up: the consumer is treated as gone
    assert outbox.closed
    assert await outbox.take() is None


async def test_a_nudge_wakes_a_waiting_consumer_with_nothing_and_is_not_remembered() -> None:
    outbox = Outbox(limit=1000)
    outbox.nudge()  # nobody waits: nothing happens
    taking = asyncio.create_task(outbox.take())
    await settle()
    assert not taking.done()
    outbox.nudge()
    assert await taking == []  # the SSE body's keep-alive is due
    taking = asyncio.create_task(outbox.take())
    await settle()
    assert not taking.done()  # the nudge was used up: the next take waits for frames
    await outbox.put(["a"])
    assert await taking == ["a"]


async def test_frames_that_come_with_a_nudge_are_taken_not_skipped() -> None:
    outbox = Outbox(limit=1000)
    taking = asyncio.create_task(outbox.take())
    await settle()
    outbox.nudge()
    await outbox.put(["a"])  # before the consumer runs again
    assert await taking == ["a"]
    outbox.end()
    taking = asyncio.create_task(outbox.take())
    await settle()
    outbox.nudge()
    assert await taking is None

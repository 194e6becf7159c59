"""Benchmark the OpenAI Responses codec.

1. Stream decode + re-encode throughput (events/s on one core), with a baseline of
   ``json.loads`` + ``json.dumps`` of the same events measured in the same run.
2. ``encode_request`` of a history with reasoning and tool calls at 250/500/1,000/2,000
   messages (linearity), with a baseline of ``json.dumps`` of the encoded payload.

Codec and baseline runs are interleaved so both see the same machine load; the best run
(least disturbed) and the median are printed, with the load average.

Run: ``taskset -c 0 python bench/codec_responses_bench.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_responses import (
    ENCRYPTED_FORMAT,
    StreamDecoder,
    StreamEncoder,
    encode_request,
)
from interlock.transcript import (
    Continuation,
    Message,
    Opaque,
    ReasoningPart,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    response_to_updates,
)


def best_of(runs: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def stream_events(chunks: int) -> list[SseEvent]:
    """A realistic stream: reasoning summary, a long text in small deltas, two calls."""
    text_parts = tuple(TextPart(text=f"word{i} ") for i in range(1))
    response = Response(
        message=Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="summary", text="thinking"),
                ReasoningPart(
                    reasoning_kind="encrypted",
                    opaque=Opaque(provider="openai", format=ENCRYPTED_FORMAT, data="b" * 200),
                ),
                *text_parts,
                ToolCallPart(call_id="call_1", name="f", arguments='{"a":1}'),
            ),
        ),
        id="resp_bench",
        model="m",
        created=1,
        finish_reason="tool_calls",
    )
    encoder = StreamEncoder()
    events: list[SseEvent] = []
    for update in response_to_updates(response):
        events.extend(encoder.encode(update))
    events.extend(encoder.finish())
    # Blow up the text into many small deltas, as a real stream does.
    out: list[SseEvent] = []
    for event in events:
        payload = json.loads(event.data)
        if payload["type"] == "response.output_text.delta":
            for index in range(chunks):
                delta = {**payload, "delta": f"tok{index} ", "obfuscation": "abcd"}
                out.append(SseEvent(data=json.dumps(delta), event=payload["type"]))
        else:
            out.append(event)
    return out


def roundtrip(events: list[SseEvent]) -> int:
    decoder, encoder = StreamDecoder(), StreamEncoder()
    produced = 0
    for event in events:
        for update in decoder.feed(event):
            produced += len(encoder.encode(update))
    return produced + len(encoder.finish())


def baseline(events: list[SseEvent]) -> None:
    for event in events:
        json.dumps(json.loads(event.data))


def history(size: int) -> Request:
    blob = Opaque(provider="openai", format=ENCRYPTED_FORMAT, data="g" * 400)
    messages: list[Message] = [Message(role="user", parts=(TextPart(text="start"),))]
    step = 0
    while len(messages) < size:
        step += 1
        call_id = f"call_{step}"
        messages.append(
            Message(
                role="assistant",
                parts=(
                    ReasoningPart(
                        reasoning_kind="summary",
                        text="reasoning summary " * 4,
                        item_id=f"rs_{step}",
                    ),
                    ReasoningPart(reasoning_kind="encrypted", opaque=blob, item_id=f"rs_{step}"),
                    TextPart(text="Let me check. " * 3, item_id=f"msg_{step}"),
                    ToolCallPart(
                        call_id=call_id, name="lookup", arguments='{"q": "x"}', item_id=f"fc_{step}"
                    ),
                ),
            )
        )
        messages.append(
            Message(
                role="tool",
                parts=(ToolResultPart(call_id=call_id, output=(TextPart(text="result " * 5),)),),
            )
        )
        messages.append(Message(role="user", parts=(TextPart(text="and then?"),)))
    return Request(
        model="m", messages=tuple(messages[:size]), continuation=Continuation(store=False)
    )


def timings(rounds: int, actions: dict[str, Callable[[], object]]) -> dict[str, list[float]]:
    """Seconds per call of each action, ``rounds`` times, interleaved (same load for all).

    ``<name>`` holds wall-clock seconds, ``<name>/cpu`` the process CPU seconds of the same
    calls (time spent preempted by other jobs is not in it, which steadies the median).
    """
    seconds: dict[str, list[float]] = {}
    for name in actions:
        seconds[name], seconds[f"{name}/cpu"] = [], []
    for _ in range(rounds):
        for name, action in actions.items():
            start, cpu = time.perf_counter(), time.process_time()
            action()
            seconds[f"{name}/cpu"].append(time.process_time() - cpu)
            seconds[name].append(time.perf_counter() - start)
    return seconds


def load() -> str:
    """The 1-minute load average (other jobs on the machine inflate wall-clock figures)."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "n/a"


def main() -> None:
    print(f"load average at start: {load()}")
    print("best = least disturbed wall-clock run; median = median of the CPU times")
    events = stream_events(2_000)
    count = len(events)
    stream = timings(15, {"codec": lambda: roundtrip(events), "json": lambda: baseline(events)})
    for label, key, pick in (
        ("best wall-clock", "", min),
        ("median CPU time", "/cpu", statistics.median),
    ):
        codec, base = pick(stream[f"codec{key}"]), pick(stream[f"json{key}"])
        print(
            f"stream decode+re-encode, {count} events, {label}: {count / codec:,.0f} events/s "
            f"(json.loads+dumps baseline {count / base:,.0f} events/s; ratio {codec / base:.2f}x)"
        )
    print("encode_request (store=false, reasoning + calls), best wall-clock / median CPU time:")
    previous: float | None = None
    for size in (250, 500, 1_000, 2_000):
        request = history(size)
        payload = encode_request(request).payload
        encode = timings(
            21,
            {
                "codec": lambda request=request: encode_request(request),
                "json": lambda payload=payload: json.dumps(payload),
            },
        )
        best, median = min(encode["codec"]), statistics.median(encode["codec/cpu"])
        base = min(encode["json"])
        growth = "" if previous is None else f", best x{best / previous:.2f} vs half size"
        print(
            f"  {size:5d} messages: {best * 1000:.2f} / {median * 1000:.2f} ms "
            f"({best / size * 1e6:.2f} us/message; json.dumps of the payload {base * 1000:.2f} ms, "
            f"ratio {best / base:.2f}x{growth})"
        )
        previous = best
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()

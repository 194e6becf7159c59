"""Benchmark of the Chat Completions codec (results in docs/benchmarks/codec_chat.md).

1. Stream decode + re-encode: events/s through ``StreamDecoder`` → ``StreamEncoder``
   on one core, against a baseline of ``json.loads`` + ``json.dumps`` of the same events
   (the least any relay that looks at the JSON must do). Target ≥ 50,000 events/s.
2. Encode a history with reasoning and tool calls (``encode_request``, DeepSeek
   ``reasoning_content`` dialect) at 250 / 500 / 1,000 / 2,000 messages, against a
   baseline of ``json.dumps`` of the encoded payload. Target ≤ 5 ms at 1,000 and linear.

Run: ``python bench/codec_chat_bench.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import StreamDecoder, StreamEncoder, encode_request
from interlock.transcript import (
    Message,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


def _best(run: Callable[[], object], repeat: int = 7) -> float:
    """Best CPU time of ``repeat`` runs (seconds).

    CPU time of this thread, not wall time: the figure is per core and does not count
    time the process spent preempted on a shared machine.
    """
    times: list[float] = []
    for _ in range(repeat):
        start = time.thread_time()
        run()
        times.append(time.thread_time() - start)
    return min(times)


def _stream(deltas: int) -> list[SseEvent]:
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, object], finish: str | None = None) -> SseEvent:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return SseEvent(data=json.dumps(body, separators=(",", ":")))

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": f"thought {i} "}) for i in range(deltas // 4)]
    events += [chunk({"content": f"word{i} "}) for i in range(deltas // 2)]
    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": "{"},
    }
    events.append(chunk({"tool_calls": [first]}))
    for i in range(deltas // 4):
        piece = {"index": 0, "function": {"arguments": f'"k{i}":1,'}}
        events.append(chunk({"tool_calls": [piece]}))
    last = {"index": 0, "function": {"arguments": '"end":0}'}}
    events.append(chunk({"tool_calls": [last]}))
    events.append(chunk({}, "tool_calls"))
    events.append(SseEvent(data="[DONE]"))
    return events


def _relay(events: list[SseEvent]) -> int:
    decoder = StreamDecoder()
    encoder = StreamEncoder(reasoning_dialect="reasoning_content")
    sent = 0
    for event in events:
        for update in decoder.feed(event):
            sent += len(encoder.encode(update))
    return sent + len(encoder.finish())


def _baseline_relay(events: list[SseEvent]) -> int:
    return sum(len(json.dumps(json.loads(e.data))) for e in events if e.data != "[DONE]")


def _history(size: int) -> Request:
    messages: list[Message] = []
    step = 0
    while len(messages) < size:
        step += 1
        call_id = f"call_{step}"
        messages.append(Message(role="user", parts=(TextPart(text=f"question {step}"),)))
        messages.append(
            Message(
                role="assistant",
                parts=(
                    ReasoningPart(reasoning_kind="raw", text=f"I should look up item {step}."),
                    TextPart(text="Let me check."),
                    ToolCallPart(call_id=call_id, name="lookup", arguments=f'{{"id":{step}}}'),
                ),
            )
        )
        result = ToolResultPart(call_id=call_id, output=(TextPart(text=f"value {step}"),))
        messages.append(Message(role="tool", parts=(result,)))
        messages.append(Message(role="assistant", parts=(TextPart(text=f"It is {step}."),)))
    return Request(model="m", messages=tuple(messages[:size]))


def main() -> None:
    events = _stream(20_000)
    relay = _best(lambda: _relay(events), repeat=5)
    baseline = _best(lambda: _baseline_relay(events), repeat=5)
    rate = len(events) / relay
    print("## Stream decode + re-encode (one core)")
    print(f"events: {len(events)}")
    print(f"codec relay: {relay * 1000:.1f} ms = {rate:,.0f} events/s (target >= 50,000)")
    print(
        f"baseline json.loads+dumps: {baseline * 1000:.1f} ms = {len(events) / baseline:,.0f} events/s"
    )
    print(f"ratio codec/baseline: {relay / baseline:.2f}x")
    print()
    print("## encode_request, history with reasoning + tool calls (reasoning_content dialect)")
    print("| messages | encode ms | baseline json.dumps ms | ratio | ms per 1k messages |")
    print("|---:|---:|---:|---:|---:|")
    for size in (250, 500, 1000, 2000):
        request = _history(size)
        if size % 4:
            request = _history(size - size % 4)
        encode = _best(lambda r=request: encode_request(r, reasoning_dialect="reasoning_content"))
        payload = encode_request(request, reasoning_dialect="reasoning_content").payload
        dumps = _best(lambda p=payload: json.dumps(p))
        print(
            f"| {size} | {encode * 1000:.2f} | {dumps * 1000:.2f} | {encode / dumps:.2f}x | "
            f"{encode * 1000 / size * 1000:.2f} |"
        )


if __name__ == "__main__":
    main()

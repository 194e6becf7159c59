"""Benchmark the Gemini codec: stream decode + re-encode, and history encoding.

Run: ``python bench/codec_gemini_bench.py``. Prints a Markdown report (recorded in
``docs/benchmarks/codec_gemini.md``). Every figure comes with a ratio against a baseline
measured in the same run: ``json.loads`` + ``json.dumps`` of the same data, the floor any
JSON codec pays.

Targets (issue 3): ≥ 50,000 stream events/s decode + re-encode on one core; a 1,000-message
history with reasoning and tool calls encoded in ≤ 5 ms, cost linear in history size.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from interlock.codecs import gemini
from interlock.codecs._sse import SseEvent
from interlock.codecs.gemini._wire import DIALECT, signature
from interlock.transcript import (
    Message,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

SIGNATURE = "CiIB4/H/XkZ+Q0cXyR2lqHk3rE0iYnLz8Hh1vVvq3xQ="


def stream_events(steps: int) -> list[SseEvent]:
    """A realistic trace: thought fragments, text fragments, a call, a signed tail per step."""
    chunks: list[dict[str, object]] = []
    for step in range(steps):
        parts: list[dict[str, object]] = [
            {"text": f"Thinking about step {step}, ", "thought": True},
            {"text": "weighing the options.", "thought": True},
            {"text": "Here is "},
            {"text": f"part {step} of the answer."},
            {
                "functionCall": {
                    "id": f"call_{step}",
                    "name": "lookup",
                    "args": {"q": f"item {step}", "n": step},
                },
                "thoughtSignature": SIGNATURE,
            },
            {"text": "", "thoughtSignature": SIGNATURE},
        ]
        for part in parts:
            chunks.append(
                {
                    "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
                    "modelVersion": "gemini-3-flash-preview",
                    "responseId": "bench",
                }
            )
    chunks.append(
        {
            "candidates": [{"finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 30,
                "totalTokenCount": 60,
            },
            "responseId": "bench",
        }
    )
    return [SseEvent(data=json.dumps(chunk)) for chunk in chunks]


def decode_and_reencode(events: list[SseEvent]) -> int:
    decoder = gemini.StreamDecoder()
    encoder = gemini.StreamEncoder()
    out = 0
    for event in events:
        for update in decoder.feed(event):
            out += len(encoder.encode(update))
    for update in decoder.finish():
        out += len(encoder.encode(update))
    return out + len(encoder.finish())


def json_baseline(events: list[SseEvent]) -> int:
    return sum(len(json.dumps(json.loads(event.data))) for event in events)


def history(messages: int) -> Request:
    """``messages`` canonical messages: user / assistant(thought + signed call) / tool / text."""
    origin = {DIALECT: {}}
    out: list[Message] = []
    step = 0
    while len(out) < messages:
        out.append(
            Message(
                role="user", parts=(TextPart(text=f"Question {step}: what about item {step}?"),)
            )
        )
        out.append(
            Message(
                role="assistant",
                parts=(
                    ReasoningPart(
                        reasoning_kind="summary", text=f"Need to look up item {step}.", extra=origin
                    ),
                    ToolCallPart(
                        call_id=f"call_{step}",
                        name="lookup",
                        arguments=f'{{"q":"item {step}","n":{step}}}',
                        signature=signature(SIGNATURE),
                    ),
                ),
            )
        )
        out.append(
            Message(
                role="tool",
                parts=(
                    ToolResultPart(
                        call_id=f"call_{step}",
                        name="lookup",
                        output=(TextPart(text=f"item {step} is fine"),),
                    ),
                ),
            )
        )
        out.append(
            Message(
                role="assistant",
                parts=(TextPart(text=f"Item {step} is fine.", signature=signature(SIGNATURE)),),
            )
        )
        step += 1
    return Request(model="gemini-3-flash-preview", messages=tuple(out[:messages]))


def best(run: Callable[[], object], repeats: int) -> float:
    """Least CPU time of this thread over ``repeats`` runs, after one warm-up.

    Thread CPU time leaves out time spent preempted on a shared machine, so the figure is
    per core; the minimum is the undisturbed cost.
    """
    run()
    samples: list[float] = []
    for _ in range(repeats):
        start = time.thread_time()
        run()
        samples.append(time.thread_time() - start)
    return min(samples)


def main() -> None:
    events = stream_events(500)
    codec = best(lambda: decode_and_reencode(events), 25)
    baseline = best(lambda: json_baseline(events), 25)
    print("## Stream decode + re-encode (one core)\n")
    print("| what | events | time | events/s | ratio to baseline |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| Gemini decode + re-encode | {len(events)} | {codec * 1e3:.1f} ms | {len(events) / codec:,.0f} | {codec / baseline:.2f}× |"
    )
    print(
        f"| baseline: json.loads + json.dumps | {len(events)} | {baseline * 1e3:.1f} ms | {len(events) / baseline:,.0f} | 1.00× |"
    )
    print("\n## History encoding (reasoning + signed calls + results)\n")
    print("| messages | encode_request | per message | json.dumps of the payload | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for size in (250, 500, 1000, 2000, 4000):
        request = history(size)
        encoded = gemini.encode_request(request)
        assert encoded.warnings == ()
        seconds = best(lambda request=request: gemini.encode_request(request), 40)
        dumps = best(lambda payload=encoded.payload: json.dumps(payload), 40)
        print(
            f"| {size} | {seconds * 1e3:.2f} ms | {seconds / size * 1e6:.2f} µs | {dumps * 1e3:.2f} ms | {seconds / dumps:.2f}× |"
        )


if __name__ == "__main__":
    main()

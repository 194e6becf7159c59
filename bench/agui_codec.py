"""AG-UI codec throughput, as ratios against baselines measured in the same run.

- encode: transcript text deltas → AG-UI event dicts → JSON text, against serializing the
  same number of prebuilt event dicts (the cost no encoder can avoid).
- decode: a 1,000-message ``RunAgentInput`` → canonical messages, against the official
  ``RunAgentInput`` pydantic validation alone.

Run: ``python bench/agui_codec.py``. Record results in ``docs/benchmarks/agui_codec.md``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from ag_ui.core import RunAgentInput

from interlock.codecs.agui import AguiEventEncoder, decode_run_input
from interlock.transcript import PartDelta, PartFinished, PartStarted, ResponseStarted, TextPart

DELTAS = 20_000
HISTORY = 1_000


def best_of(runs: int, work: Callable[[], object]) -> float:
    """The median wall time of ``runs`` calls, in seconds."""
    timings: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def encode_stream() -> None:
    encoder = AguiEventEncoder(thread_id="t", run_id="r", clock=lambda: 1_760_000_000_000)
    frames = [json.dumps(event) for event in encoder.start()]
    frames += [json.dumps(event) for event in encoder.encode(ResponseStarted())]
    frames += [json.dumps(e) for e in encoder.encode(PartStarted(index=0, part=TextPart(text="")))]
    for _ in range(DELTAS):
        for event in encoder.encode(PartDelta(index=0, delta="tok ")):
            frames.append(json.dumps(event))
    frames += [json.dumps(e) for e in encoder.encode(PartFinished(index=0, part=TextPart(text="")))]
    frames += [json.dumps(event) for event in encoder.finish()]


PREBUILT = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "r:a1", "delta": "tok ", "timestamp": 1}
    for _ in range(DELTAS)
]


def serialize_only() -> None:
    for event in PREBUILT:
        json.dumps(event)


def history() -> dict[str, object]:
    messages: list[dict[str, object]] = []
    for index in range(HISTORY // 4):
        messages += [
            {"id": f"u{index}", "role": "user", "content": f"question {index}"},
            {"id": f"r{index}", "role": "reasoning", "content": "thinking"},
            {
                "id": f"a{index}",
                "role": "assistant",
                "content": "calling",
                "toolCalls": [
                    {
                        "id": f"c{index}",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q":1}'},
                    }
                ],
            },
            {"id": f"t{index}", "role": "tool", "toolCallId": f"c{index}", "content": "42"},
        ]
    return {"threadId": "t", "runId": "r", "messages": messages}


def main() -> None:
    encode_time = best_of(7, encode_stream)
    baseline_time = best_of(7, serialize_only)
    print(
        f"encode {DELTAS} deltas: {encode_time * 1e3:.1f} ms "
        f"({DELTAS / encode_time:,.0f} events/s), serialize-only baseline "
        f"{baseline_time * 1e3:.1f} ms, ratio {encode_time / baseline_time:.2f}x"
    )
    payload = history()
    decode_time = best_of(7, lambda: decode_run_input(payload))
    validate_time = best_of(7, lambda: RunAgentInput.model_validate(payload))
    print(
        f"decode {HISTORY}-message history: {decode_time * 1e3:.2f} ms, "
        f"pydantic-validation baseline {validate_time * 1e3:.2f} ms, "
        f"ratio {decode_time / validate_time:.2f}x"
    )


if __name__ == "__main__":
    main()

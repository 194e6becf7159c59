"""Encoder scenarios shared by the golden-trace tests (and their fixture regeneration).

Run ``python -m tests.codecs.agui.scenarios`` from the repository root to rewrite the
``fixtures/*.jsonl`` traces after a deliberate change; review the diff before committing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from interlock.codecs.agui import AguiEventEncoder, ApprovalStyle
from interlock.transcript import (
    ApprovalRequestPart,
    JsonObject,
    Opaque,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    ResponseFinished,
    ResponseStarted,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Update,
    Usage,
    UsageUpdate,
)

KEY = b"test-seal-key-0123456789abcdef!!"
FIXTURES = Path(__file__).parent / "fixtures"
ENCRYPTED = Opaque(
    provider="openai", format="openai.responses.encrypted_content", data="gAAAAB-enc"
)
SIGNATURE = Opaque(provider="google", format="gemini.thought_signature", data="CsYBAY89a1")
WEATHER = ToolCallPart(call_id="call_1", name="get_weather", arguments='{"city":"Paris"}')
DELETE = ToolCallPart(call_id="call_9", name="delete_file", arguments='{"path":"/tmp/a"}')


def clock() -> int:
    return 1_760_000_000_000


def encoder(
    style: ApprovalStyle = "interrupt", client_tools: frozenset[str] = frozenset()
) -> AguiEventEncoder:
    return AguiEventEncoder(
        thread_id="thread-1",
        run_id="run-1",
        seal_key=KEY,
        tenant="acme",
        approval_style=style,
        client_tools=client_tools,
        clock=clock,
    )


def feed(target: AguiEventEncoder, updates: list[Update]) -> list[JsonObject]:
    events: list[JsonObject] = []
    for update in updates:
        events += target.encode(update)
    return events


def streamed_text(index: int, *pieces: str) -> list[Update]:
    text = "".join(pieces)
    return [
        PartStarted(index=index, part=TextPart(text="")),
        *(PartDelta(index=index, delta=piece) for piece in pieces),
        PartFinished(index=index, part=TextPart(text=text)),
    ]


def plain_chat() -> list[JsonObject]:
    run = encoder()
    events = run.start()
    events += feed(
        run,
        [
            ResponseStarted(model="gpt-5"),
            *streamed_text(0, "Hello", "", " there!"),
            UsageUpdate(usage=Usage(input_tokens=12, output_tokens=3)),
            ResponseFinished(finish_reason="stop"),
        ],
    )
    return events + run.finish()


def reasoning_and_tool() -> list[JsonObject]:
    run = encoder()
    events = run.start()
    reasoning = ReasoningPart(reasoning_kind="summary", text="", item_id="rs_1")
    events += feed(
        run,
        [
            ResponseStarted(model="gpt-5"),
            PartStarted(index=0, part=reasoning),
            PartDelta(index=0, delta="Need the weather."),
            PartFinished(
                index=0,
                part=ReasoningPart(
                    reasoning_kind="summary",
                    text="Need the weather.",
                    opaque=ENCRYPTED,
                    item_id="rs_1",
                ),
            ),
            PartStarted(index=1, part=ToolCallPart(call_id="call_1", name="get_weather")),
            PartDelta(index=1, delta='{"city":'),
            PartDelta(index=1, delta='"Paris"}'),
            PartFinished(index=1, part=replace(WEATHER, signature=SIGNATURE)),
            UsageUpdate(usage=Usage(input_tokens=20, output_tokens=9, reasoning_tokens=4)),
            ResponseFinished(finish_reason="tool_calls"),
        ],
    )
    events += run.tool_result(
        ToolResultPart(call_id="call_1", output=(TextPart(text='{"tempC":18}'),))
    )
    events += feed(
        run,
        [
            ResponseStarted(model="gpt-5"),
            *streamed_text(0, "It is 18 °C."),
            UsageUpdate(usage=Usage(input_tokens=40, output_tokens=6, cached_input_tokens=20)),
            ResponseFinished(finish_reason="stop"),
        ],
    )
    return events + run.finish()


def approval(style: ApprovalStyle) -> list[JsonObject]:
    run = encoder(style)
    events = run.start()
    events += feed(
        run,
        [
            ResponseStarted(model="gpt-5"),
            *streamed_text(0, "I will delete it."),
            PartStarted(index=1, part=DELETE),
            PartFinished(index=1, part=DELETE),
            ResponseFinished(finish_reason="tool_calls"),
        ],
    )
    events += run.approval_request(ApprovalRequestPart(approval_id="ap_1", call=DELETE))
    return events + run.finish()


def frontend_tool() -> list[JsonObject]:
    run = encoder(client_tools=frozenset({"pick_color"}))
    events = run.start()
    call = ToolCallPart(call_id="call_c", name="pick_color", arguments="{}")
    events += feed(
        run,
        [ResponseStarted(), PartStarted(index=0, part=call), ResponseFinished()],
    )
    return events + run.finish()


SCENARIOS: dict[str, Callable[[], list[JsonObject]]] = {
    "plain_chat": plain_chat,
    "reasoning_and_tool": reasoning_and_tool,
    "approval_interrupt": lambda: approval("interrupt"),
    "approval_confirm_changes": lambda: approval("confirm_changes"),
    "frontend_tool": frontend_tool,
}


def trace_path(name: str) -> Path:
    return FIXTURES / f"{name}.jsonl"


def write_traces() -> None:
    for name, scenario in SCENARIOS.items():
        lines = [json.dumps(event, ensure_ascii=False) for event in scenario()]
        trace_path(name).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_traces()

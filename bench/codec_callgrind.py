"""Instructions per call of the pure codecs, every dialect, under callgrind.

CPU time on a loaded machine moves by tens of percent; the user-space instructions a call
executes do not. Each case runs in one process under ``valgrind --tool=callgrind
--instr-atstart=no``: a small helper (compiled here with ``cc`` from valgrind's
``callgrind.h``) starts instrumentation after the imports and dumps the counts around each
case, so a figure is the instructions of the calls alone, divided by the calls.

Cases (the history is ``bench/history_bench.py``'s weather agent, 1,000 messages, with its
tool declared; each dialect's form of it is the Chat form encoded by that dialect's codec):

* ``decode:D``: ``decode_request`` of the history in dialect ``D``'s wire form;
* ``encode:D:E``: ``encode_request`` for dialect ``E`` of the history decoded from ``D``;
* ``stream:D:text`` / ``stream:D:tool``: a stream decoder fed a whole stream of ``D``
  (20 text deltas; or 5 text deltas and a call whose arguments come in 4 pieces), as
  ``D``'s own stream encoder writes it;
* ``relay:D:E:text``: that text stream decoded from ``D`` and encoded for ``E``.

``D``/``E``: ``chat`` (reasoning dialect ``reasoning_content``), ``resp``, ``gem``,
``anth``. ``--baseline DIR`` measures another checkout (``git worktree add``) with the same
inputs in the same run.

Usage: python bench/codec_callgrind.py [--baseline DIR] [--cases decode:chat,stream:chat:text]
Needs valgrind, its headers (``valgrind/callgrind.h``) and a C compiler.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from interlock.codecs import registry
from interlock.codecs._contract import WireCodec
from interlock.codecs._sse import SseEvent
from interlock.codecs.registry import DialectName
from interlock.transcript import (
    JsonObject,
    PartDelta,
    PartFinished,
    PartStarted,
    ReplayPolicy,
    ResponseFinished,
    ResponseStarted,
    TextPart,
    ToolCallPart,
    Update,
    Usage,
    UsageUpdate,
)

DIALECTS: dict[str, DialectName] = {
    "chat": "openai-chat",
    "resp": "openai-responses",
    "gem": "gemini",
    "anth": "anthropic",
}
CASES = (
    *(f"decode:{d}" for d in DIALECTS),
    *(f"encode:chat:{d}" for d in DIALECTS),
    *(f"encode:{d}:{d}" for d in ("resp", "gem", "anth")),
    *(f"stream:{d}:{kind}" for d in DIALECTS for kind in ("text", "tool")),
    *(f"relay:{d}:{d}:text" for d in DIALECTS),
    "relay:chat:resp:text",
    "relay:resp:chat:text",
)
HELPER = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""


def codec(short: str) -> WireCodec:
    name = DIALECTS[short]
    if name == "openai-chat":
        return registry.wire_codec(name, reasoning_dialect="reasoning_content")
    return registry.wire_codec(name)


def histories() -> dict[str, JsonObject]:
    """The 1,000-message history in every dialect's wire form."""
    sys.path.insert(0, str(Path(__file__).parent))
    from history_bench import WEATHER_TOOL, history

    messages = json.loads(json.dumps(history(1000)).replace("#VARY#", "x"))
    chat: JsonObject = {"model": "m", "messages": messages, "tools": [WEATHER_TOOL]}
    request = codec("chat").decode_request(chat)
    wires: dict[str, JsonObject] = {"chat": chat}
    for short in ("resp", "gem", "anth"):
        encoded = codec(short).encode_request(request, ReplayPolicy(mode="degrade")).payload
        wires[short] = json.loads(json.dumps(encoded))
    return wires


def updates(kind: str) -> list[Update]:
    """A text answer in 20 deltas, or a short text and a call in 4 argument pieces."""
    words = [f"word{i} " for i in range(20 if kind == "text" else 5)]
    out: list[Update] = [ResponseStarted(id="r1", model="m", created=1)]
    out.append(PartStarted(index=0, part=TextPart(text="")))
    out += [PartDelta(index=0, delta=word) for word in words]
    out.append(PartFinished(index=0, part=TextPart(text="".join(words))))
    if kind == "tool":
        pieces = ['{"city"', ': "Par', 'is", "un', 'it": "c"}']
        call = ToolCallPart(call_id="call_1", name="get_weather", arguments="")
        out.append(PartStarted(index=1, part=call))
        out += [PartDelta(index=1, delta=piece) for piece in pieces]
        whole = ToolCallPart(call_id="call_1", name="get_weather", arguments="".join(pieces))
        out.append(PartFinished(index=1, part=whole))
    out.append(UsageUpdate(usage=Usage(input_tokens=10, output_tokens=20)))
    out.append(ResponseFinished(finish_reason="stop" if kind == "text" else "tool_calls"))
    return out


def events(short: str, kind: str) -> list[SseEvent]:
    encoder = codec(short).stream_encoder()
    out = [event for update in updates(kind) for event in encoder.encode(update)]
    return out + encoder.finish()


def case(spec: str, wires: dict[str, JsonObject]) -> Callable[[], object]:
    """The call measured for ``spec`` (see the module docstring)."""
    kind, source, *rest = spec.split(":")
    if kind == "decode":
        decoding, wire = codec(source), wires[source]
        return lambda: decoding.decode_request(wire)
    if kind == "encode":
        request, target = codec(source).decode_request(wires[source]), codec(rest[0])
        return lambda: target.encode_request(request, ReplayPolicy(mode="degrade"))
    stream = events(source, rest[-1])
    upstream = codec(source)
    client = codec(rest[0]) if kind == "relay" else None

    def run() -> None:
        decoder = upstream.stream_decoder()
        encoder = client.stream_encoder() if client is not None else None
        for update in [u for event in stream for u in decoder.feed(event)] + decoder.finish():
            if encoder is not None:
                encoder.encode(update)
        if encoder is not None:
            encoder.finish()

    return run


def child(helper: str, wires_file: str, specs: list[str]) -> None:
    """Under callgrind: run each case (after two warm-up calls) between two dumps."""
    wires = json.loads(Path(wires_file).read_text())
    library = ctypes.CDLL(helper)
    library.start()
    for spec in specs:
        name, calls = spec.rsplit("@", 1)
        action = case(name, wires)
        action()
        action()
        library.dump(b"warm-up")
        for _ in range(int(calls)):
            action()
        library.dump(spec.encode())


def measure(tree: Path, helper: Path, wires: Path, specs: list[str], work: Path) -> dict[str, int]:
    """Instructions per call of each case, with ``tree`` as the imported ``interlock``."""
    out = work / f"callgrind-{abs(hash(str(tree)))}"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        __file__,
        "--child",
        str(helper),
        str(wires),
        *specs,
    ]
    environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    subprocess.run(command, env=environment, check=True, capture_output=True)
    counts: dict[str, int] = {}
    for dump in work.glob(f"{out.name}.*"):
        text = dump.read_text()
        trigger = text.partition("desc: Trigger: Client Request: ")[2].partition("\n")[0]
        total = int(text.partition("\ntotals: ")[2].partition("\n")[0] or 0)
        if trigger and trigger != "warm-up":
            name, calls = trigger.rsplit("@", 1)
            counts[name] = total // int(calls)
    return counts


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description="Instructions per call of the pure codecs.")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alongside")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    arguments = parser.parse_args()
    names = arguments.cases.split(",") if arguments.cases else list(CASES)
    specs = [f"{name}@{3 if name.split(':')[0] in ('decode', 'encode') else 20}" for name in names]
    with tempfile.TemporaryDirectory(prefix="codec-callgrind-") as folder:
        work = Path(folder)
        (work / "helper.c").write_text(HELPER)
        helper = work / "helper.so"
        compile_helper = [
            "cc",
            "-O2",
            "-shared",
            "-fPIC",
            "-o",
            str(helper),
            str(work / "helper.c"),
        ]
        subprocess.run(compile_helper, check=True)
        wires = work / "wires.json"
        wires.write_text(json.dumps(histories()))
        here = measure(Path(__file__).resolve().parent.parent, helper, wires, specs, work)
        base = measure(arguments.baseline, helper, wires, specs, work) if arguments.baseline else {}
    print(f"load average {os.getloadavg()[0]:.1f}; instructions per call (callgrind)")
    print("| case | this checkout | baseline | change |")
    print("|---|---:|---:|---:|")
    for name in names:
        now, before = here.get(name, 0), base.get(name)
        change = f"{(now - before) / before:+.0%}" if before else ""
        shown = f"{before:,}" if before else ""
        print(f"| {name} | {now:,} | {shown} | {change} |")


if __name__ == "__main__":
    main()

"""Proxy cost at real history sizes, and across a growing agent conversation.

Same processes as ``bench/proxy_bench.py`` (emulators and ``interlock serve`` on loopback,
one gateway worker), the same cheap raw-socket client and the same pairing: every
proxied request is timed next to a direct request to the same emulator with the same
history, so the machine's load hits both alike; "added" is proxied minus direct.
Besides wall time, the gateway's own CPU per request is read from the kernel
(``/proc/<pid>/task/*/schedstat``, nanoseconds of CPU of every thread of the gateway).

Cases (Chat client; "same" = Chat upstream, "cross" = Responses upstream; the direct
request for "cross" is the same history in Responses' own form):

* ``small``: one user message;
* a size sweep, ``--sizes`` messages (a weather agent: user, assistant tool call, tool
  result, assistant answer; ~135 bytes per message, 1,000 messages ≈ 134 KB);
* ``tool200k``: a 200 KB tool result.

Every request of a case carries a different history: ``--vary first`` (default) changes
the first message, so no two requests share a prefix (what a gateway sees for unrelated
requests); ``--vary continue`` sends the history once, then that history plus one new
step per request (what an agent sends on its next turn).

``--turns N``: conversations growing by one step per turn (assistant tool call + tool
result), turn 10 and turn N measured interleaved: per round a late conversation is sent
to turn N - 10 and an early one to turn 5, then early turns 6–15 and late turns N - 9 to N
alternately, so the two are measured within seconds of each other ("turn 10" and "turn
N" are the medians of those ten each; the ratio is per round, its median over
``--rounds``). N ≥ 25.

``--baseline DIR``: a second gateway run from another checkout (``git worktree add``),
measured in the same rounds, interleaved, so the two columns are comparable.

``--saturate SECONDS``: the continued sizes and the 200 KB tool result again under ``wrk``
(16 connections, cycling through 50 continuations of one history), server CPU per request:
the saturating driver next to the one-at-a-time pairs.

``--upstream anthropic``: the same cases to an Anthropic Messages emulator instead: "same"
is an Anthropic client (``/v1/messages``, the history in Anthropic's form, model
``a-same``), "cross" a Chat client (model ``a-cross``); the direct request is the history in
Anthropic's form. No reasoning text: Anthropic replays only thinking it signed itself.

``--store sqlite`` (a file per gateway) or ``--store redis://HOST:PORT/N``: the gateways'
store instead of ``memory://`` (what a vault lookup costs on a real store; two gateways
given one Redis URL share it).

``--callgrind N``: instructions per request instead of CPU time (each gateway under
``valgrind --tool=callgrind``, ``N`` requests per case; see ``history_callgrind.py``).

``--litellm BIN``: LiteLLM's proxy (``BIN`` is its ``litellm`` command, installed in a
virtual environment of its own) measured alongside in the same rounds, one worker, model
``same`` routed to the same Chat emulator: same-dialect cases only (the size sweep, the
tool result, the small request), CPU of its process and children.

Usage: python bench/history_bench.py [--sizes 10,100,1000,2000] [--rounds 5]
       [--requests 100] [--turns 500] [--baseline DIR] [--wrk SECONDS] [--saturate SECONDS]
       [--litellm BIN] [--callgrind N] [--upstream anthropic]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import history_callgrind
import proxy_bench as pb

from interlock.codecs import anthropic, openai_chat, openai_responses
from interlock.transcript import JsonObject, ReplayPolicy

MARK = "#VARY#"
STEP = "@@STEP@@"
"""A placeholder history item where a new step is spliced in (``--vary continue``)."""
WEATHER_TOOL: JsonObject = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        },
    },
}


# ---------------------------------------------------------------- histories


def step(index: int, result: str | None = None) -> list[JsonObject]:
    """One agent step: the model calls a tool, the tool answers."""
    arguments = json.dumps({"city": f"City {index}", "unit": "celsius"})
    content = result or json.dumps({"temperature": 20 + index % 10, "conditions": "cloudy"})
    return [
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": f"The user wants city {index}; I call the weather tool.",
            "tool_calls": [
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"call_{index}", "content": content},
    ]


def history(size: int) -> list[JsonObject]:
    """``size`` messages: system, then user / tool call / tool result / answer rounds."""
    messages: list[JsonObject] = [{"role": "system", "content": f"You answer briefly. {MARK}"}]
    index = 0
    while len(messages) < size:
        messages.append({"role": "user", "content": f"What is the weather in city {index}?"})
        messages.extend(step(index))
        answer = f"In City {index} it is {20 + index % 10} degrees and cloudy today."
        messages.append({"role": "assistant", "content": answer})
        index += 1
    messages = messages[:size]
    while messages[-1]["role"] != "user" and messages[-1]["role"] != "tool":
        messages.pop()
    return messages


def tool_result_history(size_bytes: int) -> list[JsonObject]:
    """A system message, a question, one tool call whose result is ``size_bytes`` long."""
    rows = json.dumps([{"row": i, "value": "x" * 40} for i in range(size_bytes // 56)])
    return [
        {"role": "system", "content": f"You answer briefly. {MARK}"},
        {"role": "user", "content": "Summarise the table."},
        *step(0, rows[:size_bytes]),
    ]


def chat_body(messages: list[JsonObject], model: str, *, placeholder: bool = False) -> bytes:
    """A Chat request; to the Responses upstream (``cross``) without reasoning text.

    The Chat emulator (DeepSeek's rules) wants ``reasoning_content`` on tool-call steps;
    Responses wants encrypted reasoning the client never had (the gateway's vault would
    restore it from earlier answers), so the cross-dialect client sends none.
    """
    if model == "cross":
        messages = [_without_reasoning(message) for message in messages]
    history: list[object] = [*messages, STEP] if placeholder else list(messages)
    return json.dumps({"model": model, "messages": history, "tools": [WEATHER_TOOL]}).encode()


def _without_reasoning(message: JsonObject) -> JsonObject:
    return {key: value for key, value in message.items() if key != "reasoning_content"}


def responses_body(
    messages: list[JsonObject], *, placeholder: bool = False, model: str = "M"
) -> bytes:
    """The same history in Responses' form (what the gateway sends, encoded by the codec)."""
    messages = [_without_reasoning(message) for message in messages]
    request = openai_chat.decode_request({"model": "M", "messages": messages})
    payload = openai_responses.encode_request(request, policy=ReplayPolicy()).payload
    payload["model"] = model
    payload["store"] = False
    payload["tools"] = [{"type": "function", **WEATHER_TOOL["function"]}]  # type: ignore[dict-item]
    if placeholder:
        payload["input"] = [*payload["input"], STEP]  # type: ignore[misc]
    return json.dumps(payload).encode()


ANTHROPIC_PATH = "/v1/messages"
ANTHROPIC_MODELS = """
[[upstreams]]
name = "anthropic"
protocol = "anthropic"
base_url = "http://127.0.0.1:{port}/v1"
[[models]]
name = "a-same"
upstream = "anthropic"
model = "M"
[[models]]
name = "a-cross"
upstream = "anthropic"
model = "M"
"""
"""``--upstream anthropic``: an Anthropic client's model and a Chat client's, both to the
Anthropic emulator."""


def anthropic_payload(messages: list[JsonObject], model: str = "M") -> JsonObject:
    """The history in Anthropic's form, encoded by the codec from the Chat form without
    reasoning (Anthropic replays only thinking it signed), the weather tool declared."""
    plain = [_without_reasoning(message) for message in messages]
    chat = {"model": model, "messages": plain, "tools": [WEATHER_TOOL]}
    request = openai_chat.decode_request(chat)  # type: ignore[arg-type]  # JSON of lists of objects
    return anthropic.encode_request(request, policy=ReplayPolicy()).payload


def anthropic_body(
    messages: list[JsonObject], *, placeholder: bool = False, model: str = "M"
) -> bytes:
    """A request of an Anthropic client (or the direct request to the emulator)."""
    payload = anthropic_payload(messages, model)
    if placeholder:
        payload["messages"] = [*cast(list[JsonObject], payload["messages"]), STEP]
    return json.dumps(payload).encode()


def anthropic_items(messages: list[JsonObject]) -> list[JsonObject]:
    """``messages`` (a step: tool call, result) as Anthropic wire messages after a user turn."""
    opened: list[JsonObject] = [{"role": "user", "content": "next"}, *messages]
    return cast(list[JsonObject], anthropic_payload(opened)["messages"])[1:]


def anthropic_bodies_for(
    messages: list[JsonObject], cross: bool, vary: str
) -> Callable[[int], tuple[bytes, bytes]]:
    """:func:`bodies_for` with an Anthropic upstream: (direct, proxied) body of request
    ``index``; the proxied one an Anthropic client's (``a-same``) or a Chat client's
    (``a-cross``)."""
    model = "a-cross" if cross else "a-same"

    def proxy_body(plain: list[JsonObject], placeholder: bool = False) -> bytes:
        if cross:
            chat = [_without_reasoning(message) for message in plain]
            return chat_body(chat, model, placeholder=placeholder)
        return anthropic_body(plain, placeholder=placeholder, model=model)

    if vary == "first":
        direct, proxy = anthropic_body(messages), proxy_body(messages)

        def first(index: int) -> tuple[bytes, bytes]:
            tag = b"%07d" % index
            return direct.replace(MARK.encode(), tag), proxy.replace(MARK.encode(), tag)

        return first
    plain = [without_mark(message) for message in messages]
    direct, proxy = anthropic_body(plain, placeholder=True), proxy_body(plain, True)
    cut = b', "%s"' % STEP.encode()

    def continued(index: int) -> tuple[bytes, bytes]:
        if index == 0:
            return direct.replace(cut, b""), proxy.replace(cut, b"")
        new = step(1_000_000 + index)
        items = b", " + b", ".join(json.dumps(item).encode() for item in anthropic_items(new))
        own = items
        if cross:
            chat = _chat_items(new, reasoning=False)
            own = b", " + b", ".join(json.dumps(item).encode() for item in chat)
        return direct.replace(cut, items), proxy.replace(cut, own)

    return continued


def anthropic_turn(messages: list[JsonObject], cross: bool) -> tuple[bytes, bytes]:
    """(direct, proxied) body of a conversation's turn with an Anthropic upstream."""
    if cross:
        chat = [_without_reasoning(message) for message in messages]
        return anthropic_body(messages), chat_body(chat, "a-cross")
    return anthropic_body(messages), anthropic_body(messages, model="a-same")


# ---------------------------------------------------------------- measuring


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` and its children, in nanoseconds."""
    total = 0
    for process in [pid, *pb.children(pid)]:
        for task in Path(f"/proc/{process}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
    return total


@dataclass
class Variant:
    """One gateway under test."""

    name: str
    port: int
    pid: int


def serving(variants: list[Variant], cross: bool) -> list[Variant]:
    """The variants that serve the case: LiteLLM is set up for the same-dialect model only."""
    return [variant for variant in variants if not cross or variant.name != "litellm"]


@dataclass
class Sample:
    added: list[float]
    cpu: float


def run_pairs(
    direct_port: int,
    direct_path: str,
    variant: Variant,
    bodies: Callable[[int], tuple[bytes, bytes]],
    count: int,
    proxy_path: str = pb.CHAT_PATH,
) -> Sample:
    """``count`` direct/proxied pairs (order flipped every other pair) after 10 warm-ups.

    Fresh connections per call: an idle keep-alive connection is closed after 5 s, which a
    loaded machine reaches between two calls.
    """
    direct = pb.Connection(direct_port)
    connection = pb.Connection(variant.port)
    for index in range(10):
        direct_body, proxy_body = bodies(index)
        direct.post(direct_path, direct_body)
        connection.post(proxy_path, proxy_body)
    added: list[float] = []
    started = cpu_ns(variant.pid)
    for index in range(10, 10 + count):
        direct_body, proxy_body = bodies(index)
        if connection.buffer:
            raise RuntimeError("unread bytes on the gateway connection")
        if index % 2:
            proxied = connection.post(proxy_path, proxy_body).total
            alone = direct.post(direct_path, direct_body).total
        else:
            alone = direct.post(direct_path, direct_body).total
            proxied = connection.post(proxy_path, proxy_body).total
        added.append(proxied - alone)
    connection.close()
    direct.close()
    return Sample(added, (cpu_ns(variant.pid) - started) / count / 1e6)


def bodies_for(
    messages: list[JsonObject], cross: bool, model: str, vary: str
) -> Callable[[int], tuple[bytes, bytes]]:
    """(direct, proxied) body of request ``index``; each request's history is different.

    ``first``: the first message carries the request number (no two share a prefix).
    ``continue``: request 0 is the history itself, request ``n`` that history plus one
    new step (a tool call and its result), as an agent's next turn.
    """
    if vary == "first":
        direct = responses_body(messages) if cross else chat_body(messages, "M")
        proxy = chat_body(messages, model)

        def first(index: int) -> tuple[bytes, bytes]:
            tag = b"%07d" % index
            return direct.replace(MARK.encode(), tag), proxy.replace(MARK.encode(), tag)

        return first
    plain = [without_mark(message) for message in messages]
    direct = (
        responses_body(plain, placeholder=True)
        if cross
        else chat_body(plain, "M", placeholder=True)
    )
    proxy = chat_body(plain, model, placeholder=True)
    cut = b', "%s"' % STEP.encode()

    def continued(index: int) -> tuple[bytes, bytes]:
        if index == 0:
            return direct.replace(cut, b""), proxy.replace(cut, b"")
        new = step(1_000_000 + index)
        wire = responses_items(new) if cross else _chat_items(new, reasoning=True)
        items = b", " + b", ".join(json.dumps(item).encode() for item in wire)
        own = b", " + b", ".join(
            json.dumps(item).encode() for item in _chat_items(new, reasoning=not cross)
        )
        return direct.replace(cut, items), proxy.replace(cut, own)

    return continued


def without_mark(message: JsonObject) -> JsonObject:
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": content.replace(f" {MARK}", "")}
    return message


def _chat_items(messages: list[JsonObject], *, reasoning: bool) -> list[JsonObject]:
    return messages if reasoning else [_without_reasoning(message) for message in messages]


def responses_items(messages: list[JsonObject]) -> list[JsonObject]:
    return json.loads(responses_body(messages))["input"]


def case(
    label: str,
    messages: list[JsonObject],
    cross: bool,
    ports: dict[str, int],
    variants: list[Variant],
    arguments: argparse.Namespace,
) -> None:
    model = "cross" if cross else "same"
    port, path = (ports["responses"], pb.RESPONSES_PATH) if cross else (ports["chat"], pb.CHAT_PATH)
    bodies = bodies_for(messages, cross, model, arguments.vary)
    proxy_path = pb.CHAT_PATH
    if arguments.upstream == "anthropic":
        model, port, path = f"a-{model}", ports["anthropic"], ANTHROPIC_PATH
        bodies = anthropic_bodies_for(messages, cross, arguments.vary)
        proxy_path = pb.CHAT_PATH if cross else ANTHROPIC_PATH
        label = label.replace("same", "a-same").replace("cross", "a-cross")
    variants = serving(variants, cross)
    results: dict[str, list[Sample]] = {variant.name: [] for variant in variants}
    for round_index in range(arguments.rounds):
        order = variants if round_index % 2 == 0 else variants[::-1]
        for variant in order:
            sample = run_pairs(port, path, variant, bodies, arguments.requests, proxy_path)
            results[variant.name].append(sample)
    size = len(chat_body(messages, model))
    line = f"{label:<14} {len(messages):>5} msgs {size / 1000:7.1f} KB"
    for variant in variants:
        samples = results[variant.name]
        p50 = statistics.median(statistics.median(s.added) for s in samples) * pb.MS
        p99 = statistics.median(pb.pct(s.added, 0.99) for s in samples) * pb.MS
        cpu = statistics.median(s.cpu for s in samples)
        line += f" | {variant.name}: added p50 {p50:6.2f} p99 {p99:6.2f} ms, CPU {cpu:6.3f} ms"
    print(f"{line}   [load {pb.load_average()}]", flush=True)


def conversation(
    ports: dict[str, int], variants: list[Variant], arguments: argparse.Namespace, cross: bool
) -> None:
    """Turn 10 against the last turn, measured interleaved; per-turn added time and CPU.

    Each round grows two conversations of its own (own system prompts: nothing of one is
    kept for the other or the next round), every turn sent through every variant: the
    *late* one to turn ``T - 10``, then the *early* one to turn 5, unmeasured; then the
    window, measured: early turn 6 + i and late turn ``T - 9 + i`` alternately for
    i = 0..9 (order flipped every step, variants too). A turn-10 request and a turn-T
    request are thus measured seconds apart, not minutes (this VM's CPU time per request
    drifts by 30-50 % over minutes); the gateway holds both conversations meanwhile, as
    it would serving two agents. A round's ratio is the median of its late turns over the
    median of its early ones; the line gives the medians over the rounds.
    """
    model = "cross" if cross else "same"
    port, path = (ports["responses"], pb.RESPONSES_PATH) if cross else (ports["chat"], pb.CHAT_PATH)
    anthropic_upstream = arguments.upstream == "anthropic"
    proxy_path = pb.CHAT_PATH
    if anthropic_upstream:
        model, port, path = f"a-{model}", ports["anthropic"], ANTHROPIC_PATH
        proxy_path = pb.CHAT_PATH if cross else ANTHROPIC_PATH

    def turn_bodies(messages: list[JsonObject]) -> tuple[bytes, bytes]:
        if anthropic_upstream:
            return anthropic_turn(messages, cross)
        direct = responses_body(messages) if cross else chat_body(messages, "M")
        return direct, chat_body(messages, model)

    exchange = Exchange(pb.Connection(port), port, path, proxy_path, variants, cross)
    small = chat_body([{"role": "user", "content": "hello"}], model)
    for variant in exchange.variants:
        for _ in range(20):
            exchange.post(variant, small)
    turns, late_end = arguments.turns, arguments.turns - 10
    figures: dict[str, list[tuple[float, float, float, float]]] = {
        variant.name: [] for variant in exchange.variants
    }
    for round_index in range(arguments.rounds):
        early = Grown(f"early {round_index}")
        late = Grown(f"late {round_index}")
        for grown, upto in ((late, late_end), (early, 5)):
            for _ in range(upto):
                exchange.unmeasured(turn_bodies(grown.next_turn())[1])
        measured: dict[str, dict[str, list[tuple[float, float]]]] = {
            variant.name: {"early": [], "late": []} for variant in exchange.variants
        }
        for index in range(10):
            pair = [("early", early), ("late", late)]
            for which, grown in pair if index % 2 else pair[::-1]:
                bodies = turn_bodies(grown.next_turn())
                for name, sample in exchange.measured(bodies, flip=index % 2 == 1).items():
                    measured[name][which].append(sample)
        for name, samples in measured.items():
            figures[name].append(window_figures(samples["early"], samples["late"]))
    exchange.close()
    line = f"{'conversation ' + model:<19} {turns} turns × {arguments.rounds}, interleaved"
    for variant in exchange.variants:
        rows = figures[variant.name]
        a10, a_last, c10, c_last = (statistics.median(row[i] for row in rows) for i in range(4))
        ratio = statistics.median(row[3] / row[2] for row in rows)
        line += (
            f" | {variant.name}: added turn 10 {a10 * pb.MS:.2f} ms, turn {turns} "
            f"{a_last * pb.MS:.2f} ms; CPU turn 10 {c10:.3f} ms, turn {turns} {c_last:.3f} ms "
            f"(per round {ratio:.2f}x; rounds {' '.join(f'{r[3] / r[2]:.2f}' for r in rows)})"
        )
    print(f"{line}   [load {pb.load_average()}]", flush=True)


class Grown:
    """A conversation growing by one tool step per turn (its own system prompt)."""

    def __init__(self, name: str) -> None:
        self.messages: list[JsonObject] = [
            {"role": "system", "content": f"You answer briefly ({name})."},
            {"role": "user", "content": "Check the weather in many cities."},
        ]
        self.turn = 0

    def next_turn(self) -> list[JsonObject]:
        self.turn += 1
        self.messages.extend(step(self.turn))
        return self.messages


class Exchange:
    """A conversation's connections: one per variant, one to the upstream directly."""

    def __init__(
        self,
        direct: pb.Connection,
        port: int,
        path: str,
        proxy_path: str,
        variants: list[Variant],
        cross: bool,
    ) -> None:
        self.direct, self.port, self.path, self.proxy_path = direct, port, path, proxy_path
        self.variants = serving(variants, cross)
        self.connections = {variant.name: pb.Connection(variant.port) for variant in variants}

    def post(self, variant: Variant, body: bytes) -> pb.Timing:
        return post_again(self.connections, variant, body, self.proxy_path)

    def unmeasured(self, proxy_body: bytes) -> None:
        for variant in self.variants:
            self.post(variant, proxy_body)

    def measured(
        self, bodies: tuple[bytes, bytes], *, flip: bool
    ) -> dict[str, tuple[float, float]]:
        """(added seconds, CPU ms) of one proxied request per variant, each paired with a
        direct one."""
        direct_body, proxy_body = bodies
        samples: dict[str, tuple[float, float]] = {}
        for variant in self.variants[::-1] if flip else self.variants:
            started = cpu_ns(variant.pid)
            proxied = self.post(variant, proxy_body).total
            used = (cpu_ns(variant.pid) - started) / 1e6
            try:
                alone = self.direct.post(self.path, direct_body).total
            except ConnectionError:  # closed while idle (see post_again)
                self.direct = pb.Connection(self.port)
                alone = self.direct.post(self.path, direct_body).total
            samples[variant.name] = (proxied - alone, used)
        return samples

    def close(self) -> None:
        self.direct.close()
        for connection in self.connections.values():
            connection.close()


def window_figures(
    early: list[tuple[float, float]], late: list[tuple[float, float]]
) -> tuple[float, float, float, float]:
    """(added early, added late, CPU early, CPU late): medians of one round's window."""
    return (
        statistics.median(sample[0] for sample in early),
        statistics.median(sample[0] for sample in late),
        statistics.median(sample[1] for sample in early),
        statistics.median(sample[1] for sample in late),
    )


def post_again(
    connections: dict[str, pb.Connection], variant: Variant, body: bytes, path: str = pb.CHAT_PATH
) -> pb.Timing:
    """Post on the variant's connection; once more on a new one if the server had closed
    it (an idle keep-alive connection is closed after 5 s, which a loaded machine reaches)."""
    try:
        return connections[variant.name].post(path, body)
    except ConnectionError:
        connections[variant.name] = pb.Connection(variant.port)
        return connections[variant.name].post(path, body)


def wrk_cpu(variants: list[Variant], seconds: float) -> None:
    """Server CPU per request under ``wrk`` (saturating, 16 connections), small request."""
    body = chat_body([{"role": "user", "content": "hello there, how are you?"}], "same")
    line = "small, wrk -c16"
    for variant in variants:
        started = cpu_ns(variant.pid)
        begun = time.perf_counter()
        rate, errors = pb.load("wrk", variant.port, pb.CHAT_PATH, body, seconds, 16)
        elapsed = time.perf_counter() - begun
        used = (cpu_ns(variant.pid) - started) / 1e6
        line += f" | {variant.name}: {rate:,.0f} req/s, CPU {used / (rate * elapsed):.3f} ms/req, errors {errors}"
    print(f"{line}   [load {pb.load_average()}]", flush=True)


WRK_CYCLE = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies, next_body = {{}}, 0
for number = 1, {count} do
  local file = io.open("{directory}/" .. number .. ".json", "rb")
  bodies[number] = file:read("*a")
  file:close()
end
request = function()
  next_body = next_body % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[next_body])
end
"""


def saturated(
    label: str, messages: list[JsonObject], cross: bool, variants: list[Variant], seconds: float
) -> None:
    """Server CPU per request under ``wrk -t1 -c16`` (saturating), continued histories.

    The history is sent twice first (so the gateway holds it, as after a conversation's
    second request); then wrk cycles through 50 continuations of it, each one step longer.
    wrk waits up to 60 s per answer: with its default 2 s, a loaded emulator's slow answers
    were abandoned (the gateway still did the work) and only the few completed ones counted.
    """
    model = "cross" if cross else "same"
    bodies = bodies_for(messages, cross, model, "continue")
    variants = serving(variants, cross)
    directory = Path(tempfile.mkdtemp(prefix="interlock-wrk-bodies-"))
    for number in range(1, 51):
        (directory / f"{number}.json").write_bytes(bodies(number + 1)[1])
    script = directory / "cycle.lua"
    script.write_text(WRK_CYCLE.format(count=50, directory=directory))
    line = f"{label:<14} {len(messages):>5} msgs, wrk -c16"
    for variant in variants:
        warm = pb.Connection(variant.port)
        for index in range(2):
            warm.post(pb.CHAT_PATH, bodies(index)[1])
        warm.close()
        started, begun = cpu_ns(variant.pid), time.perf_counter()
        command = ["wrk", "-t1", "-c16", f"-d{seconds:.0f}s", "--timeout", "60s", "-s", str(script)]
        output = subprocess.run(
            [*command, f"http://127.0.0.1:{variant.port}{pb.CHAT_PATH}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        elapsed = time.perf_counter() - begun
        found = re.search(r"Requests/sec:\s+([\d.]+)", output)
        rate = float(found.group(1)) if found else 0.0
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
        used = (cpu_ns(variant.pid) - started) / 1e6
        line += (
            f" | {variant.name}: {rate:,.0f} req/s, CPU {used / max(rate * elapsed, 1):.3f} ms/req,"
            f" non-2xx {errors.group(1) if errors else 0}"
        )
    print(f"{line}   [load {pb.load_average()}]", flush=True)


def start_gateway(
    arguments: list[str], work: Path, source: str | None, prefix: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    """``interlock serve`` (after ``prefix``: valgrind) with its errors kept in ``work``."""
    environment = dict(os.environ)
    if source is not None:
        environment["PYTHONPATH"] = source
    errors = (work / f"gateway-{len(arguments)}-{time.monotonic_ns()}.err").open("wb")
    return subprocess.Popen(
        [*prefix, *pb.INTERLOCK, *arguments],
        cwd=work,
        env=environment,
        stdout=errors,
        stderr=errors,
    )


def store_config(config: Path, store: str, work: Path, name: str) -> Path:
    """``config`` with the store ``--store`` names for gateway ``name``: ``sqlite`` is a file
    of its own in ``work``; another URL (``redis://…/N``) is used as it is."""
    if store == "memory://":
        return config
    url = f"sqlite:///{work / name}.db" if store == "sqlite" else store
    text = config.read_text().replace('url = "memory://"', f'url = "{url}"')
    own = work / f"interlock-{name}.toml"
    own.write_text(text)
    return own


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10,100,500,1000,2000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--vary", choices=["first", "continue"], default="first")
    parser.add_argument("--turns", type=int, default=0, help="growing conversation (0: skip)")
    parser.add_argument("--baseline", help="another checkout's gateway, measured alongside")
    parser.add_argument("--wrk", type=float, default=0, help="seconds of wrk (0: skip)")
    parser.add_argument("--only", default="", help="comma list: small,sweep,tool,conversation")
    parser.add_argument(
        "--saturate", type=float, default=0, help="seconds of wrk per continued case (0: skip)"
    )
    parser.add_argument("--litellm", help="LiteLLM's litellm command: measured alongside")
    parser.add_argument("--callgrind", type=int, default=0, help="instructions over N requests")
    parser.add_argument(
        "--ingress", choices=["chat", "responses"], default="chat", help="the client (callgrind)"
    )
    parser.add_argument(
        "--upstream",
        choices=["responses", "anthropic"],
        default="responses",
        help="the cross (and, anthropic, same) upstream: see the module docstring",
    )
    parser.add_argument(
        "--store", default="memory://", help="the gateways' store: sqlite (a file each), redis URL"
    )
    arguments = parser.parse_args()
    if arguments.turns and arguments.turns < 25:
        raise SystemExit("--turns needs at least 25 turns (turns 6-15 and the last ten)")
    if arguments.callgrind:
        history_callgrind.arguments_valid(arguments)
    if arguments.upstream == "anthropic" and (arguments.litellm or arguments.saturate):
        raise SystemExit("--upstream anthropic: the paired cases and the conversation only")
    work = Path(tempfile.mkdtemp(prefix="interlock-history-bench-"))
    extra = history_callgrind.RESPONSES_CLIENT_MODELS
    anthropic_port = pb.free_port()
    if arguments.upstream == "anthropic":
        extra += ANTHROPIC_MODELS.format(port=anthropic_port)
    ports, processes, config = pb.emulated_upstreams(work, extra)
    if arguments.upstream == "anthropic":
        processes.append(pb.emulator("anthropic", anthropic_port, work, 2))
        ports["anthropic"] = anthropic_port
    variants: list[Variant] = []
    sources = [("now", None)] + ([("base", arguments.baseline)] if arguments.baseline else [])
    try:
        for name, source in sources:
            port = pb.free_port()
            own = store_config(config, arguments.store, work, name)
            arguments_list = ["serve", "--config", str(own), "--port", str(port)]
            grind = history_callgrind.prefix(work, name) if arguments.callgrind else ()
            process = start_gateway(arguments_list, work, source, grind)
            processes.append(process)
            pb.wait_healthy(port, "/healthz", process, timeout=600 if grind else 30)
            variants.append(Variant(name, port, process.pid))
        if arguments.litellm:
            port = pb.free_port()
            process = pb.litellm(arguments.litellm, port, ports["chat"], work, 1)
            processes.append(process)
            pb.wait_healthy(port, "/health/liveliness", process, timeout=180)
            variants.append(Variant("litellm", port, process.pid))
        if arguments.callgrind:
            named = [(variant.name, variant.port, variant.pid) for variant in variants]
            history_callgrind.run(named, arguments, work)
        else:
            run_cases(ports, variants, arguments)
    finally:
        for process in processes:
            pb.stop(process)
    return 0


def run_cases(
    ports: dict[str, int], variants: list[Variant], arguments: argparse.Namespace
) -> None:
    only = set(filter(None, arguments.only.split(",")))
    print(f"load average at start {pb.load_average()}; vary {arguments.vary}", flush=True)
    if not only or "small" in only:
        small: list[JsonObject] = [{"role": "user", "content": f"hello there {MARK}"}]
        for cross in (False, True):
            case(
                "small " + ("cross" if cross else "same"), small, cross, ports, variants, arguments
            )
    if not only or "sweep" in only:
        for size in (int(size) for size in arguments.sizes.split(",")):
            for cross in (False, True):
                label = "history " + ("cross" if cross else "same")
                case(label, history(size), cross, ports, variants, arguments)
    if not only or "tool" in only:
        for cross in (False, True):
            label = "tool200k " + ("cross" if cross else "same")
            case(label, tool_result_history(200_000), cross, ports, variants, arguments)
    if arguments.turns and (not only or "conversation" in only):
        for cross in (False, True):
            conversation(ports, variants, arguments, cross)
    if arguments.wrk:
        wrk_cpu(variants, arguments.wrk)
    if arguments.saturate:
        for size in (int(size) for size in arguments.sizes.split(",")):
            for cross in (False, True):
                label = "history " + ("cross" if cross else "same")
                saturated(label, history(size), cross, variants, arguments.saturate)
        for cross in (False, True):
            label = "tool200k " + ("cross" if cross else "same")
            saturated(label, tool_result_history(200_000), cross, variants, arguments.saturate)


if __name__ == "__main__":
    raise SystemExit(main())

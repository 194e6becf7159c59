"""``history_bench.py --callgrind N``: instructions per request instead of CPU time.

CPU time on a loaded 2-core machine moves by 30-100 % with the load; the instructions the
gateway executes do not. Each gateway runs under ``valgrind --tool=callgrind`` with
instrumentation off until it has warmed up; the figure is millions of user-space
instructions per request (kernel work, such as the socket reads and writes, is not
counted; the emulators run natively). Under callgrind a request takes ~50x longer, so
compare checkouts in the same run, not absolutes across machines.

``--upstream anthropic``: "same" is an Anthropic client, "cross" a Chat client, both to the
Anthropic emulator.

Per case (continued histories, ``--vary`` as given): 10 warm-up requests, instrumentation
on, 5 more, counters zeroed, ``N`` requests, dump. Conversation (``--turns T``, from the
client ``--ingress`` names): ``history_bench``'s interleaved schedule (a late conversation
to turn ``T - 10``, an early one to turn 5, then early turns 6-15 and late turns ``T - 9``
to ``T`` alternately), each of those 20 requests counted on its own; the figures are the
medians of the early ten ("turn 10") and of the late ten ("turn T").
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

import proxy_bench as pb

from interlock.transcript import JsonObject

CONTROL = "callgrind_control"


def prefix(work: Path, name: str) -> tuple[str, ...]:
    """The command prefix that runs a gateway named ``name`` under callgrind."""
    out = f"--callgrind-out-file={work}/callgrind-{name}.%p"
    return ("valgrind", "--tool=callgrind", "--instr-atstart=no", out)


def control(pid: int, *options: str) -> None:
    subprocess.run([CONTROL, *options, str(pid)], check=True, capture_output=True)


def dumped(work: Path, name: str) -> int:
    """Instructions in the newest dump of gateway ``name``."""
    dumps = glob.glob(f"{work}/callgrind-{name}.*")
    text = Path(max(dumps, key=os.path.getmtime)).read_text()
    found = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
    assert found is not None, "a callgrind dump names its total"
    return int(found.group(1))


class Client:
    """A keep-alive connection, opened again when the gateway closed it while idle (after
    5 s: ``callgrind_control`` can take that long on a loaded machine)."""

    def __init__(self, port: int, path: str = pb.CHAT_PATH) -> None:
        self.port = port
        self.path = path
        self.connection = pb.Connection(port)

    def post(self, body: bytes) -> None:
        try:
            self.connection.post(self.path, body)
        except ConnectionError:
            self.connection.close()
            self.connection = pb.Connection(self.port)
            self.connection.post(self.path, body)

    def close(self) -> None:
        self.connection.close()


def counted(pid: int, work: Path, name: str, client: Client, bodies: list[bytes]) -> float:
    """Millions of instructions per request, ``bodies`` posted by ``client``."""
    control(pid, "-z")
    for body in bodies:
        client.post(body)
    control(pid, "-d")
    return dumped(work, name) / len(bodies) / 1e6


def case(
    label: str,
    bodies: Callable[[int], bytes],
    path: str,
    variants: list[tuple[str, int, int]],
    requests: int,
    work: Path,
) -> None:
    """Instructions per proxied request (``bodies(index)`` posted to ``path``) of one case,
    every variant (name, port, pid)."""
    line = f"{label:<30} instructions per request ({requests} requests, callgrind)"
    for name, port, pid in variants:
        client = Client(port, path)
        try:
            for index in range(10):
                client.post(bodies(index))
            control(pid, "-i", "on")
            for index in range(10, 15):
                client.post(bodies(index))
            sent = [bodies(index) for index in range(15, 15 + requests)]
            per_request = counted(pid, work, name, client, sent)
            control(pid, "-i", "off")
        finally:
            client.close()
        line += f" | {name}: {per_request:.3f} M"
    print(line, flush=True)


def conversation(
    label: str,
    body_of: Callable[[list[JsonObject]], bytes],
    turns: int,
    variants: list[tuple[str, int, int]],
    work: Path,
    path: str = pb.CHAT_PATH,
) -> None:
    """Instructions per turn at turn 10 and at turn ``turns``, in ``history_bench``'s
    interleaved schedule: a late conversation sent to turn ``turns - 10`` and an early
    one to turn 5, then early turns 6-15 and late turns ``turns - 9``.. alternately,
    each of those counted on its own (``body_of`` writes a turn's body)."""
    import history_bench as hb  # (it imports this module)

    line = f"{label:<22} {turns} turns interleaved, instructions per turn (callgrind)"
    for name, port, pid in variants:
        client = Client(port, path)
        early, late = hb.Grown("early"), hb.Grown("late")
        figures: dict[str, list[float]] = {"early": [], "late": []}
        try:
            for grown, upto in ((late, turns - 10), (early, 5)):
                for _ in range(upto):
                    client.post(body_of(grown.next_turn()))
            # Instrumented only now: the turns before run ~10x faster uninstrumented, and
            # the counted instructions of a request do not depend on it.
            control(pid, "-i", "on")
            for index in range(10):
                pair = [("early", early), ("late", late)]
                for which, grown in pair if index % 2 else pair[::-1]:
                    body = body_of(grown.next_turn())
                    figures[which].append(counted(pid, work, name, client, [body]))
            control(pid, "-i", "off")
        finally:
            client.close()
        first, last = (statistics.median(figures[which]) for which in ("early", "late"))
        line += f" | {name}: turn 10 {first:.3f} M, turn {turns} {last:.3f} M ({last / first:.2f}x)"
    print(line, flush=True)


def arguments_valid(arguments: argparse.Namespace) -> None:
    """Callgrind mode measures continued cases and the conversation, nothing wall-clock."""
    if arguments.litellm or arguments.wrk or arguments.saturate:
        raise SystemExit("--callgrind measures Interlock gateways only (no --litellm / wrk)")
    if arguments.upstream == "anthropic" and arguments.ingress != "chat":
        raise SystemExit("--upstream anthropic: the client is Chat (cross) or Anthropic (same)")
    if arguments.turns and arguments.turns < 25:
        raise SystemExit("--callgrind with --turns needs at least 25 turns")


RESPONSES_CLIENT_MODELS = """
[[models]]
name = "r-same"
upstream = "responses"
model = "M"
[[models]]
name = "r-cross"
upstream = "chat"
model = "M"
"""
"""A Responses client's models (``--ingress responses``): same dialect, and to Chat."""


def responses_client_bodies(messages: list[JsonObject], cross: bool) -> Callable[[int], bytes]:
    """Request ``index`` of a Responses client continuing ``messages`` (``--vary continue``):
    the history in Responses' form, then one new step per request."""
    import history_bench as hb  # (it imports this module)

    plain = [hb.without_mark(message) for message in messages]
    model = "r-cross" if cross else "r-same"
    proxy = hb.responses_body(plain, placeholder=True, model=model)
    cut = b', "%s"' % hb.STEP.encode()

    def continued(index: int) -> bytes:
        if index == 0:
            return proxy.replace(cut, b"")
        items = hb.responses_items(hb.step(1_000_000 + index))
        return proxy.replace(cut, b", " + b", ".join(json.dumps(item).encode() for item in items))

    return continued


def proxied(bodies: Callable[[int], tuple[bytes, bytes]]) -> Callable[[int], bytes]:
    """The proxied body of each (direct, proxied) pair."""
    return lambda index: bodies(index)[1]


def run(named: list[tuple[str, int, int]], arguments: argparse.Namespace, work: Path) -> None:
    """``--callgrind N``: the continued cases and the conversation in instructions, every
    gateway (name, port, pid)."""
    import history_bench as hb  # (it imports this module)

    only = set(filter(None, arguments.only.split(",")))
    cases: list[tuple[str, list[JsonObject]]] = []
    if not only or "sweep" in only:
        cases += [(f"history {size}", hb.history(int(size))) for size in arguments.sizes.split(",")]
    if not only or "tool" in only:
        cases.append(("tool200k", hb.tool_result_history(200_000)))
    responses = arguments.ingress == "responses"
    path = pb.RESPONSES_PATH if responses else pb.CHAT_PATH
    anthropic = arguments.upstream == "anthropic"
    for label, messages in cases:
        for cross in (False, True):
            model = "cross" if cross else "same"
            if anthropic:  # Anthropic client (same) or Chat client (cross), Anthropic upstream
                bodies = proxied(hb.anthropic_bodies_for(messages, cross, arguments.vary))
                path = pb.CHAT_PATH if cross else hb.ANTHROPIC_PATH
                model = f"a-{model}"
            elif responses:
                bodies = responses_client_bodies(messages, cross)
            else:
                bodies = proxied(hb.bodies_for(messages, cross, model, arguments.vary))
            label_now = f"{arguments.ingress} {label} {model}"
            case(label_now, bodies, path, named, arguments.callgrind, work)
    if arguments.turns and (not only or "conversation" in only):
        for cross in (False, True):
            model = "cross" if cross else "same"
            if anthropic:
                path = pb.CHAT_PATH if cross else hb.ANTHROPIC_PATH
                model = f"a-{model}"
            label_now = f"{arguments.ingress} conversation {model}"
            body_of = conversation_body(anthropic, responses, cross, model)
            conversation(label_now, body_of, arguments.turns, named, work, path)


def conversation_body(
    anthropic: bool, responses: bool, cross: bool, model: str
) -> Callable[[list[JsonObject]], bytes]:
    """A conversation turn's proxied body for the client and upstream the options name."""
    import history_bench as hb  # (it imports this module)

    if anthropic:
        return lambda messages: hb.anthropic_turn(messages, cross)[1]
    if responses:
        return lambda messages: hb.responses_body(messages, model=f"r-{model}")
    return lambda messages: hb.chat_body(messages, model)

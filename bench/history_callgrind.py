"""``history_bench.py --callgrind N``: instructions per request instead of CPU time.

CPU time on a loaded 2-core machine moves by 30-100 % with the load; the instructions the
gateway executes do not. Each gateway runs under ``valgrind --tool=callgrind`` with
instrumentation off until it has warmed up; the figure is millions of user-space
instructions per request (kernel work, such as the socket reads and writes, is not
counted; the emulators run natively). Under callgrind a request takes ~50x longer, so
compare checkouts in the same run, not absolutes across machines.

Per case (continued histories, ``--vary`` as given): 10 warm-up requests, instrumentation
on, 5 more, counters zeroed, ``N`` requests, dump. Conversation (``--turns T``): every
turn sent once, counters zeroed before turn 6 and dumped after turn 15 ("turn 10"), then
zeroed before turn ``T - 9`` and dumped after the last ("turn T").
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import proxy_bench as pb

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

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection = pb.Connection(port)

    def post(self, body: bytes) -> None:
        try:
            self.connection.post(pb.CHAT_PATH, body)
        except ConnectionError:
            self.connection.close()
            self.connection = pb.Connection(self.port)
            self.connection.post(pb.CHAT_PATH, body)

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
    bodies: Callable[[int], tuple[bytes, bytes]],
    variants: list[tuple[str, int, int]],
    requests: int,
    work: Path,
) -> None:
    """Instructions per proxied request of one case, every variant (name, port, pid)."""
    line = f"{label:<22} instructions per request ({requests} requests, callgrind)"
    for name, port, pid in variants:
        client = Client(port)
        try:
            for index in range(10):
                client.post(bodies(index)[1])
            control(pid, "-i", "on")
            for index in range(10, 15):
                client.post(bodies(index)[1])
            sent = [bodies(index)[1] for index in range(15, 15 + requests)]
            per_request = counted(pid, work, name, client, sent)
            control(pid, "-i", "off")
        finally:
            client.close()
        line += f" | {name}: {per_request:.3f} M"
    print(line, flush=True)


def conversation(
    label: str,
    turn_bodies: list[bytes],
    variants: list[tuple[str, int, int]],
    work: Path,
) -> None:
    """Instructions per turn at turn 10 and at the last turn of one conversation."""
    turns = len(turn_bodies)
    line = f"{label:<22} {turns} turns, instructions per turn (callgrind)"
    for name, port, pid in variants:
        client = Client(port)
        control(pid, "-i", "on")
        try:
            figures: list[float] = []
            number = 0
            for first in (5, turns - 10):
                while number < first:
                    client.post(turn_bodies[number])
                    number += 1
                window = turn_bodies[first : first + 10]
                figures.append(counted(pid, work, name, client, window))
                number = first + 10
            control(pid, "-i", "off")
        finally:
            client.close()
        early, last = figures
        line += f" | {name}: turn 10 {early:.3f} M, turn {turns} {last:.3f} M ({last / early:.2f}x)"
    print(line, flush=True)


def arguments_valid(arguments: argparse.Namespace) -> None:
    """Callgrind mode measures continued cases and the conversation, nothing wall-clock."""
    if arguments.litellm or arguments.wrk or arguments.saturate:
        raise SystemExit("--callgrind measures Interlock gateways only (no --litellm / wrk)")
    if arguments.turns and arguments.turns < 25:
        raise SystemExit("--callgrind with --turns needs at least 25 turns")

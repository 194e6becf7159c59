"""AG-UI traces checked by the official TypeScript client, through the Node harness.

``tests/agui_client/verify.mjs`` runs events through ``@ag-ui/client`` 1.0.0's own
``enforceEvents`` → ``transformChunks`` → ``verifyEvents``. All traces of a run go to one Node
process. When Node or the installed package is missing the check is unavailable, and the runner
says so visibly; it never counts as passed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from interlock.transcript import JsonObject

HARNESS_TIMEOUT_SECONDS = 60


class NodeUnavailable(RuntimeError):
    """Node.js or the installed ``@ag-ui/client`` package is not there."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The official client's verdict on one trace; ``error`` is set when it failed."""

    ok: bool
    error: str | None = None


def harness_dir(root: Path) -> Path:
    """The harness directory of a checkout whose root is ``root``."""
    return root / "tests" / "agui_client"


def verify_traces(traces: Mapping[str, Sequence[JsonObject]], harness: Path) -> dict[str, Verdict]:
    """Run every trace through the official client; raises :class:`NodeUnavailable`."""
    node = shutil.which("node")
    if node is None:
        raise NodeUnavailable("node is not on PATH")
    if not (harness / "node_modules" / "@ag-ui" / "client").is_dir():
        raise NodeUnavailable(f"@ag-ui/client is not installed (run npm ci in {harness})")
    document = {
        "traces": [{"name": name, "events": list(events)} for name, events in traces.items()]
    }
    completed = subprocess.run(
        [node, str(harness / "verify.mjs")],
        input=json.dumps(document),
        capture_output=True,
        text=True,
        cwd=harness,
        timeout=HARNESS_TIMEOUT_SECONDS,
        check=False,
    )
    try:
        output = json.loads(completed.stdout)
    except json.JSONDecodeError as error:
        detail = completed.stderr.strip() or completed.stdout.strip()
        raise NodeUnavailable(f"the harness failed to run: {detail[:300]}") from error
    return {
        str(verdict["name"]): Verdict(ok=bool(verdict["ok"]), error=verdict.get("error"))
        for verdict in output.get("traces", [])
    }

"""Golden fixture loading shared by the Responses codec tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interlock.codecs._sse import SseEvent

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> Any:
    """A JSON fixture."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def names(prefix: str) -> list[str]:
    """Fixture file names starting with ``prefix``."""
    return sorted(path.name for path in FIXTURES.glob(f"{prefix}*"))


def trace(name: str) -> list[SseEvent]:
    """A ``.jsonl`` stream trace as SSE events named by their type."""
    events: list[SseEvent] = []
    for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
        if line.strip():
            events.append(SseEvent(data=line, event=json.loads(line)["type"]))
    return events

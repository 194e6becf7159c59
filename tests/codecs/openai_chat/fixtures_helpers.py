"""Loading the golden wire fixtures of this folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import ReasoningDialect

FIXTURES = Path(__file__).parent / "fixtures"

DIALECT_FIXTURES: list[tuple[str, ReasoningDialect]] = [
    ("none", "none"),
    ("reasoning_content", "reasoning_content"),
    ("reasoning", "reasoning"),
    ("openrouter", "openrouter"),
    ("gemini_compat", "gemini-compat"),
]


def load(name: str) -> Any:
    """A JSON fixture."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def trace(name: str) -> list[str]:
    """A stream trace: one ``data:`` payload per line."""
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()


def events(lines: list[str]) -> list[SseEvent]:
    """The trace as SSE events."""
    return [SseEvent(data=line) for line in lines]

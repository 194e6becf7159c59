"""Golden Anthropic wire fixtures (documented shapes) and the SDK checks tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from interlock.codecs._sse import SseEvent
from interlock.conformance._sdk_anthropic import (
    anthropic_event,
    anthropic_request,
    anthropic_response,
)
from interlock.transcript import JsonObject

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_names(prefix: str) -> list[str]:
    """The fixture files starting with ``prefix`` (without extension)."""
    return sorted(path.stem for path in FIXTURES.iterdir() if path.name.startswith(prefix))


def load(name: str) -> JsonObject:
    """A JSON fixture."""
    return cast(JsonObject, json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")))


def load_stream(name: str) -> list[SseEvent]:
    """A stream fixture as the SSE parser would hand its events over."""
    events: list[SseEvent] = []
    for line in (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        events.append(SseEvent(data=json.dumps(record["data"]), event=record.get("event")))
    return events


def assert_valid_request(payload: JsonObject) -> None:
    """The payload passes the official SDK's request types, with no undeclared key."""
    assert anthropic_request(payload) == []


def assert_valid_response(payload: JsonObject) -> None:
    """The payload parses as the SDK's ``Message`` with no undeclared field."""
    assert anthropic_response(payload) == []


def assert_valid_events(events: list[SseEvent]) -> None:
    """Every event parses as the SDK's stream event, named after its ``type``."""
    for event in events:
        data = json.loads(event.data)
        assert event.event == data["type"]
        assert anthropic_event(data) == [], event

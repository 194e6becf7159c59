"""Golden wire fixtures and the google-genai SDK types used as request validators.

The SDK models forbid unknown keys (``extra="forbid"``) and accept REST camelCase; each
part of a request body is validated against its own type, the recipe of
provider-wire.md §5.3. The SDK checks shapes only: not the Part one-of, roles, turn order
or signature presence (those are the emulator's and the codec's job).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from google.genai import types

from interlock.transcript import JsonObject

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> JsonObject:
    """A JSON fixture, parsed."""
    return cast(JsonObject, json.loads((FIXTURES / name).read_text(encoding="utf-8")))


def load_stream(name: str) -> list[JsonObject]:
    """A ``.jsonl`` stream trace: one response chunk per line."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [cast(JsonObject, json.loads(line)) for line in lines if line.strip()]


def fixture_names(prefix: str, suffix: str = ".json") -> list[str]:
    """Every fixture file named ``<prefix>*<suffix>``, sorted."""
    return sorted(path.name for path in FIXTURES.glob(f"{prefix}*{suffix}"))


_REQUEST_TYPES: dict[str, Any] = {
    "systemInstruction": types.Content,
    "toolConfig": types.ToolConfig,
    "generationConfig": types.GenerationConfig,
}
_REQUEST_LISTS: dict[str, Any] = {
    "contents": types.Content,
    "tools": types.Tool,
    "safetySettings": types.SafetySetting,
}
_PASS_THROUGH = {"cachedContent", "labels", "serviceTier", "store"}


def validate_request(payload: JsonObject) -> None:
    """Validate every field of a request body against its SDK type (unknown keys forbidden)."""
    for key, value in payload.items():
        if key in _REQUEST_TYPES:
            _REQUEST_TYPES[key].model_validate(value)
        elif key in _REQUEST_LISTS:
            assert isinstance(value, list), key
            for item in value:
                _REQUEST_LISTS[key].model_validate(item)
        else:
            assert key in _PASS_THROUGH, f"unexpected top-level key {key!r}"


def validate_response(payload: JsonObject) -> None:
    """Validate a response body (or stream chunk) against the SDK response type."""
    types.GenerateContentResponse.model_validate(payload)

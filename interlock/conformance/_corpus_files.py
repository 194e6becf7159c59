"""The real-traffic corpus on disk: ``conformance/corpus/payloads/<vendor>/<file>.json``.

Each file holds the payloads one public test suite recorded from a real service in one
cassette or fixture, and names that source (repository, path, commit, licence)::

    {"corpus": 1, "source": {...}, "payloads": [
      {"dialect": "openai_chat", "vendor": "openrouter", "kind": "stream", "wire": [...]}, ...]}

``wire`` is a request or response body, or a stream: ``[{"event"?: name, "data": ...}]``
(data parsed JSON, or ``"[DONE]"``). ``conformance/corpus/extract.py`` rebuilds the files.
A malformed file raises :class:`~interlock.conformance._vectors.VectorError` naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from interlock.conformance._vectors import StreamEvent, VectorError
from interlock.transcript import JsonObject, JsonValue

CorpusKind = Literal["request", "response", "stream"]
_DIALECTS = ("openai_responses", "openai_chat", "gemini")
_KINDS = ("request", "response", "stream")
_SOURCE_KEYS = ("repository", "path", "commit", "licence")


@dataclass(frozen=True, slots=True, kw_only=True)
class CorpusPayload:
    """One recorded payload. ``name`` is ``<vendor>/<file stem>#<index>``."""

    name: str
    vendor: str
    dialect: str
    kind: CorpusKind
    wire: JsonValue
    source: JsonObject
    model: str = ""
    """The model a Gemini request was posted to (Gemini names it in the URL, not the body)."""

    @property
    def body(self) -> JsonObject:
        """The request or response body (only for those kinds)."""
        assert isinstance(self.wire, dict)
        return self.wire

    @property
    def events(self) -> tuple[StreamEvent, ...]:
        """The recorded events of a stream, in order."""
        items = self.wire if isinstance(self.wire, list) else []
        return tuple(
            StreamEvent(data=item["data"], event=cast(str | None, item.get("event")))
            for item in items
            if isinstance(item, dict)
        )


def load_corpus(root: Path) -> list[CorpusPayload]:
    """Every payload under ``root/payloads``, in a stable order."""
    payloads: list[CorpusPayload] = []
    for path in sorted((root / "payloads").glob("*/*.json")):
        payloads += _load_file(path)
    return payloads


def _load_file(path: Path) -> list[CorpusPayload]:
    try:
        document: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise VectorError(path, f"unreadable corpus file: {error}") from error
    if not isinstance(document, dict) or document.get("corpus") != 1:
        raise VectorError(path, 'expected {"corpus": 1, "source": ..., "payloads": [...]}')
    source = document.get("source")
    if not isinstance(source, dict) or any(
        not isinstance(source.get(key), str) for key in _SOURCE_KEYS
    ):
        raise VectorError(path, f"source: expected the strings {list(_SOURCE_KEYS)}")
    items = document.get("payloads")
    if not isinstance(items, list) or not items:
        raise VectorError(path, "payloads: expected a non-empty list")
    typed = cast(list[JsonValue], items)
    return [
        _payload(path, index, item, cast(JsonObject, source)) for index, item in enumerate(typed)
    ]


def _payload(path: Path, index: int, item: JsonValue, source: JsonObject) -> CorpusPayload:
    if not isinstance(item, dict):
        raise VectorError(path, f"payloads[{index}]: expected an object")
    dialect, kind, vendor = item.get("dialect"), item.get("kind"), item.get("vendor")
    if dialect not in _DIALECTS or kind not in _KINDS or not isinstance(vendor, str):
        raise VectorError(path, f"payloads[{index}]: bad dialect, kind or vendor")
    wire = item.get("wire")
    if (kind == "stream") != isinstance(wire, list) or not wire:
        raise VectorError(path, f"payloads[{index}].wire: does not fit kind {kind!r}")
    model = item.get("model", "")
    if not isinstance(model, str):
        raise VectorError(path, f"payloads[{index}].model: expected a string")
    return CorpusPayload(
        model=model,
        name=f"{path.parent.name}/{path.stem}#{index}",
        vendor=vendor,
        dialect=cast(str, dialect),
        kind=kind,
        wire=wire,
        source=source,
    )

"""Conformance vectors: the on-disk format and its loader.

A vector is one JSON file ``conformance/vectors/<dialect>/<case>.json``::

    {"vector": 1, "dialect": "gemini", "kind": "request",
     "description": "...", "origin": "which documented example or SDK shape it follows",
     "traps": [6], "options": {...}, "wire": {...}, "canonical": {...}}

``wire`` is the dialect's own JSON: a request or response body, a stream trace (a list of
``{"event"?: name, "data": object | "[DONE]"}``), an AG-UI ``RunAgentInput`` or an AG-UI event
list. ``canonical`` is what it must decode to, in the versioned transcript serialization
(``dump_request`` / ``dump_response`` / ``dump_transcript``). ``options`` are the dialect's
encode options for this vector (e.g. the Chat ``reasoning_dialect``).

Every problem with a file is a :class:`VectorError` naming that file; nothing is guessed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, cast

from interlock.codecs.registry import DIALECT_NAMES, package
from interlock.transcript import JsonObject, JsonValue

VECTOR_FORMAT = 1
"""The version of the vector file format this loader reads."""

DIALECTS = (*(package(name) for name in DIALECT_NAMES), "agui")
"""Vector dialect directories (the codec registry's packages, then AG-UI), in report order."""

VectorKind: TypeAlias = Literal["request", "response", "stream", "run_input", "events"]

_KINDS_BY_DIALECT: dict[str, tuple[str, ...]] = {
    **{package(name): ("request", "response", "stream") for name in DIALECT_NAMES},
    "agui": ("run_input", "events"),
}
_REQUIRED = ("vector", "dialect", "kind", "description", "origin", "wire", "canonical")
_OPTIONAL = ("traps", "options", "run", "notes")


class VectorError(ValueError):
    """A vector file is unreadable or malformed; ``path`` names the file."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEvent:
    """One recorded SSE event of a stream trace: ``data`` is parsed JSON or ``"[DONE]"``."""

    data: JsonValue
    event: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Vector:
    """One loaded vector. ``name`` is ``<dialect>/<case>``, unique across the suite."""

    path: Path
    dialect: str
    case: str
    kind: VectorKind
    description: str
    origin: str
    wire: JsonValue
    canonical: JsonObject
    traps: tuple[int, ...] = ()
    options: JsonObject = field(default_factory=dict[str, JsonValue])
    run: JsonObject = field(default_factory=dict[str, JsonValue])

    @property
    def name(self) -> str:
        """``<dialect>/<case>``: how reports and failures name this vector."""
        return f"{self.dialect}/{self.case}"

    @property
    def wire_object(self) -> JsonObject:
        """The wire payload of a request, response or run-input vector."""
        if not isinstance(self.wire, dict):
            raise VectorError(self.path, "wire: expected an object")
        return self.wire

    @property
    def stream_events(self) -> tuple[StreamEvent, ...]:
        """The recorded events of a stream trace, in order."""
        return tuple(_stream_event(self.path, item, i) for i, item in enumerate(_items(self.wire)))

    @property
    def wire_events(self) -> tuple[JsonObject, ...]:
        """The AG-UI events of an ``events`` vector, in order."""
        events: list[JsonObject] = []
        for index, item in enumerate(_items(self.wire)):
            if not isinstance(item, dict):
                raise VectorError(self.path, f"wire[{index}]: expected an event object")
            events.append(item)
        return tuple(events)


def _items(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _stream_event(path: Path, item: JsonValue, index: int) -> StreamEvent:
    if not isinstance(item, dict) or "data" not in item:
        raise VectorError(path, f"wire[{index}]: expected {{'data': ..., 'event'?: name}}")
    name = item.get("event")
    if name is not None and not isinstance(name, str):
        raise VectorError(path, f"wire[{index}].event: expected a string")
    unknown = set(item) - {"data", "event"}
    if unknown:
        raise VectorError(path, f"wire[{index}]: unknown keys {sorted(unknown)}")
    return StreamEvent(data=item["data"], event=name)


def load_vector(path: Path) -> Vector:
    """Read and check one vector file; raises :class:`VectorError` naming ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise VectorError(path, f"cannot read: {error.strerror or error}") from error
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise VectorError(
            path, f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from error
    if not isinstance(document, dict):
        raise VectorError(path, "expected a JSON object")
    return _build_vector(path, cast(dict[str, JsonValue], document))


def _build_vector(path: Path, document: Mapping[str, JsonValue]) -> Vector:
    missing = [key for key in _REQUIRED if key not in document]
    if missing:
        raise VectorError(path, f"missing keys {missing}")
    unknown = sorted(set(document) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise VectorError(path, f"unknown keys {unknown}")
    if document["vector"] != VECTOR_FORMAT:
        raise VectorError(path, f"vector: unsupported format {document['vector']!r}")
    dialect = _string(path, document, "dialect")
    if dialect not in _KINDS_BY_DIALECT:
        raise VectorError(path, f"dialect: unknown dialect {dialect!r}; known: {list(DIALECTS)}")
    if path.parent.name != dialect:
        raise VectorError(path, f"dialect: {dialect!r} but the file is under {path.parent.name!r}")
    kind = _string(path, document, "kind")
    if kind not in _KINDS_BY_DIALECT[dialect]:
        allowed = list(_KINDS_BY_DIALECT[dialect])
        raise VectorError(path, f"kind: {kind!r} is not a {dialect} vector kind; use {allowed}")
    return Vector(
        path=path,
        dialect=dialect,
        case=path.stem,
        kind=cast(VectorKind, kind),
        description=_string(path, document, "description"),
        origin=_string(path, document, "origin"),
        wire=_wire(path, kind, document["wire"]),
        canonical=_object(path, document, "canonical"),
        traps=_traps(path, document.get("traps", [])),
        options=_object(path, document, "options", required=False),
        run=_object(path, document, "run", required=False),
    )


def _string(path: Path, document: Mapping[str, JsonValue], key: str) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value.strip():
        raise VectorError(path, f"{key}: expected a non-empty string")
    return value


def _object(
    path: Path, document: Mapping[str, JsonValue], key: str, *, required: bool = True
) -> JsonObject:
    value = document.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise VectorError(path, f"{key}: expected an object")
    return value


def _wire(path: Path, kind: str, wire: JsonValue) -> JsonValue:
    expects_list = kind in ("stream", "events")
    if expects_list and not (isinstance(wire, list) and wire):
        raise VectorError(path, "wire: expected a non-empty list of events")
    if not expects_list and not isinstance(wire, dict):
        raise VectorError(path, "wire: expected an object")
    return wire


def _traps(path: Path, value: JsonValue) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(item, int) and 1 <= item <= 37 for item in value
    ):
        raise VectorError(path, "traps: expected a list of trap numbers 1-37")
    return tuple(cast(list[int], value))


def vector_paths(root: Path, dialects: Iterable[str] = DIALECTS) -> list[Path]:
    """Every ``*.json`` file under ``root/<dialect>/``, sorted; unknown directories are errors."""
    wanted = list(dialects)
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if directory.is_dir() and directory.name not in _KINDS_BY_DIALECT:
            raise VectorError(directory, f"unknown dialect directory; known: {list(DIALECTS)}")
    return [path for dialect in wanted for path in sorted((root / dialect).glob("*.json"))]


def load_vectors(root: Path, dialects: Iterable[str] = DIALECTS) -> list[Vector]:
    """Load every vector of ``dialects`` under ``root``; the first bad file raises."""
    return [load_vector(path) for path in vector_paths(root, dialects)]


def check_dialect(name: str) -> str:
    """The vector dialect ``name`` names (``openai-chat`` or ``openai_chat``), else ``ValueError``."""
    dialect = name.replace("-", "_")
    if dialect not in _KINDS_BY_DIALECT:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
    return dialect

"""Structured access logs: one JSON object per line on the ``interlock.access`` logger.

Only fixed fields are logged: the path without its query string (``?key=`` carries API
keys), status, timing, tenant, route and translation. Never headers, bodies or keys.

Writing a line costs one JSON encode (orjson, falling back to ``json`` for the rare line
orjson would write differently) and one write. While the logger is as
:func:`configure` left it (its one stderr handler, no filters, nothing else attached), the
line goes straight to that handler's stream under the handler's lock: the same bytes a
``LogRecord`` through ``Logger.handle`` and ``Formatter("%(message)s")`` would produce,
without building the record. Anything else attached to the logger (a handler a test or a
``logging.config`` adds, a filter, another formatter) gets the ordinary logging path, so
it sees every line as a record.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import TextIO

import orjson

LOGGER = logging.getLogger("interlock.access")
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_FORMATTER = logging.Formatter("%(message)s")


class _Handler(logging.StreamHandler[TextIO]):
    """The stderr handler :func:`configure` installs; :func:`_direct` recognises it."""


def configure(enabled: bool) -> None:
    """Send access lines to stderr (idempotent); ``enabled=False`` silences them."""
    LOGGER.propagate = False
    LOGGER.setLevel(logging.INFO if enabled else logging.WARNING)
    if not LOGGER.handlers:
        handler = _Handler(sys.stderr)
        handler.setFormatter(_FORMATTER)
        LOGGER.addHandler(handler)


def _direct() -> _Handler | None:
    """The handler to write to directly, when writing directly changes nothing."""
    handlers = LOGGER.handlers
    if len(handlers) != 1 or LOGGER.filters or LOGGER.disabled:
        return None
    handler = handlers[0]
    if (
        type(handler) is not _Handler
        or handler.filters
        or handler.formatter is not _FORMATTER
        or handler.level > logging.INFO
    ):
        return None
    return handler


def _encoded(fields: dict[str, object]) -> str:
    """``fields`` as ``json.dumps`` writes them (ASCII, ``\\u`` escapes, no spaces).

    orjson writes the same text for strings of printable ASCII and for numbers Python
    writes without an exponent, in a tenth of the time; anything else (a non-ASCII path or
    tenant, which orjson would write as UTF-8, a DEL character, a float such as 1e+16) goes
    through ``json``. ``ts`` and ``duration_ms`` are a line's only floats (every other
    field is a string, an integer or a boolean).
    """
    for value in (fields["ts"], fields["duration_ms"]):
        if type(value) is float and value != 0 and not 1e-4 <= abs(value) < 1e16:
            return _ENCODER.encode(fields)
    try:
        text = orjson.dumps(fields).decode()
    except TypeError:  # a lone surrogate, say: json escapes it
        return _ENCODER.encode(fields)
    return text if text.isascii() and "\x7f" not in text else _ENCODER.encode(fields)


def _written(handler: _Handler, text: str) -> bool:
    """Write one line as ``StreamHandler.emit`` does, under the handler's lock (what
    ``Handler.acquire`` takes); False if it failed (nothing raised)."""
    lock = handler.lock
    if lock is None:
        return False  # a handler whose lock was taken away: the logging path decides
    with lock:
        try:
            stream = handler.stream
            stream.write(text + "\n")
            stream.flush()
            return True
        except Exception:  # the logging path then reports it the way logging does
            return False


class AccessRecord:
    """What one request did; filled in as the request proceeds, written once at the end.

    A plain class rather than a keyword-only dataclass: one is made per request, and
    its four positional arguments make it in two thirds of the instructions.
    """

    __slots__ = (
        "endpoint",
        "error",
        "events",
        "method",
        "model",
        "outcome",
        "path",
        "run_id",
        "started",
        "status",
        "stream",
        "tenant",
        "translation",
        "upstream",
    )

    def __init__(
        self,
        method: str,
        path: str,
        endpoint: str,
        started: float,
        *,
        status: int = 0,
        tenant: str = "",
        model: str = "",
        upstream: str = "",
        translation: str = "",
        stream: bool = False,
        error: str = "",
        run_id: str = "",
        outcome: str = "",
        events: int = 0,
    ) -> None:
        self.method = method
        self.path = path
        self.endpoint = endpoint
        self.started = started
        self.status = status
        self.tenant = tenant
        self.model = model
        self.upstream = upstream
        self.translation = translation
        self.stream = stream
        self.error = error
        self.run_id = run_id
        """AG-UI runs only (with ``outcome`` and ``events``): the client's run id."""
        self.outcome = outcome
        self.events = events

    def __repr__(self) -> str:
        names = ("method", "path", "endpoint", "status", "model", "upstream", "error")
        return "AccessRecord(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"

    def write(self) -> None:
        """Log the record (a no-op when access logs are off)."""
        if not LOGGER.isEnabledFor(logging.INFO):
            return
        text = _encoded(self.fields())
        handler = _direct()
        if handler is not None and _written(handler, text):
            return
        # makeRecord + handle is what LOGGER.info does, minus the caller lookup (a stack
        # walk per request) that a fixed-format access line never shows.
        record = LOGGER.makeRecord(LOGGER.name, logging.INFO, __file__, 0, text, (), None)
        LOGGER.handle(record)

    def fields(self) -> dict[str, object]:
        """The line's fields, in the order they are written."""
        line: dict[str, object] = {
            "ts": round(time.time(), 3),
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "duration_ms": round((time.perf_counter() - self.started) * 1000, 3),
            "tenant": self.tenant,
            "model": self.model,
            "upstream": self.upstream,
            "translation": self.translation,
            "stream": self.stream,
        }
        if self.error:
            line["error"] = self.error
        if self.run_id:
            line |= {"run_id": self.run_id, "outcome": self.outcome, "events": self.events}
        return line

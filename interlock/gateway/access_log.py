"""Structured access logs: one JSON object per line on the ``interlock.access`` logger.

Only fixed fields are logged: the path without its query string (``?key=`` carries API
keys), status, timing, tenant, route and translation. Never headers, bodies or keys.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass

LOGGER = logging.getLogger("interlock.access")
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def configure(enabled: bool) -> None:
    """Send access lines to stderr (idempotent); ``enabled=False`` silences them."""
    LOGGER.propagate = False
    LOGGER.setLevel(logging.INFO if enabled else logging.WARNING)
    if not LOGGER.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        LOGGER.addHandler(handler)


@dataclass(slots=True, kw_only=True)
class AccessRecord:
    """What one request did; filled in as the request proceeds, written once at the end."""

    method: str
    path: str
    endpoint: str
    started: float
    status: int = 0
    tenant: str = ""
    model: str = ""
    upstream: str = ""
    translation: str = ""
    stream: bool = False
    error: str = ""
    run_id: str = ""
    """AG-UI runs only (with ``outcome`` and ``events``): the client's run id."""
    outcome: str = ""
    events: int = 0

    def write(self) -> None:
        """Log the record (a no-op when access logs are off)."""
        if not LOGGER.isEnabledFor(logging.INFO):
            return
        line = {
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
        # makeRecord + handle is what LOGGER.info does, minus the caller lookup (a stack
        # walk per request) that a fixed-format access line never shows.
        record = LOGGER.makeRecord(
            LOGGER.name, logging.INFO, __file__, 0, _ENCODER.encode(line), (), None
        )
        LOGGER.handle(record)

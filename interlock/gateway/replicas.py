"""Replicas sharing one store: startup checks and a registry of who is alive.

Several ``interlock serve`` processes on one Redis (behind a load balancer) must agree:

- **One seal key.** Reasoning sealed by one replica is opened by whichever replica gets
  the next request, so a shared store needs ``server.seal_key_env`` (the same key on every
  replica); a key generated into each host's ``state_dir`` would make replicas reject each
  other's values (``SEAL_INVALID``). :func:`check_shared_store` refuses to start otherwise.
- **One configuration.** Each replica publishes digests of its configuration
  (:func:`config_digests`, per section, secrets hashed) in the store and logs a warning
  naming the sections in which it differs from a live replica (:class:`ReplicaRegistry`).

The registry keeps ``replica/<id>`` entries ``{"digests", "seen", "started"}``, refreshed
every ``heartbeat_seconds``; an entry not refreshed for ``dead_after`` seconds is a replica
that is gone (killed, crashed or partitioned). Entries of replicas that stopped cleanly
are removed on shutdown; stale ones are swept by the next replica to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import unquote

from interlock.gateway.config import ConfigError, GatewayConfig
from interlock.gateway.stores import KeyValueBackend, stop_if_cancelled, store_key
from interlock.transcript import JsonObject

LOGGER = logging.getLogger("interlock.gateway.replicas")

SHARED_SCHEMES = ("redis://", "rediss://")
"""Store URLs several hosts share (a SQLite file is shared only by one host's processes)."""

HEARTBEAT_SECONDS = 2.0
DEAD_AFTER_SECONDS = 10.0

_LISTEN_FIELDS = frozenset({"host", "port", "allow_non_loopback", "state_dir", "seal_key_env"})
"""Server settings that may differ between replicas (where each listens, local paths)."""


def is_shared(config: GatewayConfig) -> bool:
    """True when the store is one several hosts share (Redis)."""
    return config.store.url.startswith(SHARED_SCHEMES)


def check_shared_store(config: GatewayConfig) -> None:
    """Refuse a shared store without a configured seal key (see the module docstring)."""
    if is_shared(config) and config.server.seal_key is None:
        raise ConfigError(
            "server.seal_key_env",
            "a shared store (redis://) needs the same configured seal key on every replica: "
            "set server.seal_key_env to an environment variable holding it (a key generated "
            "per host would make replicas reject each other's sealed values, SEAL_INVALID)",
        )


def _hidden(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def _plain(value: Any) -> Any:
    """A dataclass tree as JSON-ready values, with secrets (``repr=False``) hashed."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for item in dataclasses.fields(value):
            field_value = getattr(value, item.name)
            out[item.name] = _plain(field_value) if item.repr else _hidden(field_value)
        return out
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, bytes):
        return _hidden(value)
    return value


def config_digests(config: GatewayConfig) -> dict[str, str]:
    """One short digest per config section; equal digests mean equal settings.

    Where each replica listens (host, port, state_dir…) and the config file's path are left
    out; secrets (API keys, the seal key) take part only as hashes.
    """
    server = {
        name: value for name, value in _plain(config.server).items() if name not in _LISTEN_FIELDS
    }
    sections: dict[str, Any] = {
        "server": server,
        "store": _plain(config.store),
        "upstreams": _plain(config.upstreams),
        "models": _plain(config.models),
        "agents": _plain(config.agents),
        "routing": _plain(config.routing),
    }
    return {
        name: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
        for name, value in sections.items()
    }


def _seen(entry: JsonObject) -> float:
    seen = entry.get("seen")
    return float(seen) if isinstance(seen, int | float) else 0.0


def new_replica_id() -> str:
    """``host:pid:random`` — unique per process start."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class ReplicaRegistry:
    """This replica's entry in the shared store, and what it knows of the others."""

    def __init__(
        self,
        backend: KeyValueBackend,
        digests: dict[str, str],
        *,
        replica_id: str | None = None,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        dead_after: float = DEAD_AFTER_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.digests = digests
        self.replica_id = replica_id or new_replica_id()
        self.heartbeat_seconds = heartbeat_seconds
        self.dead_after = dead_after
        self.clock = clock
        self.started = clock()
        self._beat: asyncio.Task[None] | None = None

    def _key(self, replica_id: str) -> str:
        return store_key("replica", "-", replica_id)

    async def start(self) -> list[str]:
        """Publish this replica, warn about disagreeing live ones; returns the warnings."""
        await self.publish()
        warnings = await self.compare()
        for warning in warnings:
            LOGGER.warning("%s", warning)
        self._beat = asyncio.create_task(self._heartbeat())
        return warnings

    async def publish(self) -> None:
        """Write (or refresh) this replica's entry."""
        entry: JsonObject = {
            "digests": dict(self.digests),
            "seen": self.clock(),
            "started": self.started,
        }
        await self.backend.set_many({self._key(self.replica_id): json.dumps(entry)})

    async def others(self) -> dict[str, JsonObject]:
        """Live replicas other than this one, by id; stale entries are deleted."""
        found: dict[str, JsonObject] = {}
        prefix = store_key("replica", "-") + "/"
        for key, value in await self.backend.scan(prefix):
            replica_id = unquote(key.removeprefix(prefix))
            entry = json.loads(value)
            if replica_id == self.replica_id or not isinstance(entry, dict):
                continue
            if self.clock() - _seen(cast(JsonObject, entry)) > self.dead_after:
                await self.backend.delete(key)
                continue
            found[replica_id] = cast(JsonObject, entry)
        return found

    async def compare(self) -> list[str]:
        """One warning per live replica whose configuration differs from this one's."""
        warnings: list[str] = []
        for other_id, entry in sorted((await self.others()).items()):
            theirs = entry.get("digests")
            if not isinstance(theirs, dict):
                continue
            differing = sorted(
                name for name, digest in self.digests.items() if theirs.get(name) != digest
            )
            if differing:
                warnings.append(
                    f"replica config differs from live replica {other_id} in "
                    f"{', '.join(differing)}: replicas sharing a store should share one config"
                )
        return warnings

    async def alive(self, replica_id: str) -> bool:
        """True while ``replica_id`` refreshed its entry within ``dead_after`` seconds."""
        if replica_id == self.replica_id:
            return True
        value = await self.backend.get(self._key(replica_id))
        if value is None:
            return False
        return self.clock() - _seen(cast(JsonObject, json.loads(value))) <= self.dead_after

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            try:
                await self.publish()
            except Exception:  # a store hiccup must not end the heartbeat
                LOGGER.exception("refreshing replica %s failed", self.replica_id)
            stop_if_cancelled()

    async def stop(self) -> None:
        """Stop refreshing and remove this replica's entry (it left cleanly)."""
        beat, self._beat = self._beat, None
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        with contextlib.suppress(Exception):
            await self.backend.delete(self._key(self.replica_id))

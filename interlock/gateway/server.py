"""The uvicorn server ``interlock serve`` runs: the first SIGTERM drains before exiting.

uvicorn's own handling of SIGTERM closes the listening socket and every WebSocket at
once. :class:`DrainingServer` instead starts the app's :class:`~.lifecycle.Lifecycle`
drain on the first SIGTERM (or Ctrl-C) and lets uvicorn shut down only once the drain
is over; a second signal shuts down at once, as uvicorn would. Apps without a lifecycle
(the emulators) get uvicorn's behaviour unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from types import FrameType
from typing import Any

import uvicorn

from interlock.gateway.dispatch import GatewayApp
from interlock.gateway.lifecycle import Lifecycle

LOGGER = logging.getLogger("interlock.gateway.lifecycle")

DRAIN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def find_lifecycle(app: Any) -> Lifecycle | None:
    """The lifecycle of a gateway app, looking through wrapping middleware (``.app``)."""
    current = app
    for _ in range(16):
        gateway = getattr(getattr(current, "state", None), "gateway", None)
        lifecycle = getattr(gateway, "lifecycle", None)
        if isinstance(lifecycle, Lifecycle):
            return lifecycle
        current = getattr(current, "app", None)
        if current is None:
            return None
    return None


class DrainingServer(uvicorn.Server):
    """``uvicorn.Server`` that drains the gateway on the first SIGTERM or SIGINT."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain: asyncio.Task[None] | None = None
        if isinstance(config.app, GatewayApp) and config.proxy_headers:
            # X-Forwarded-* read where a route can read them, not around every request
            # (see GatewayApp.take_proxy_headers).
            config.proxy_headers = False
            config.app.take_proxy_headers(config.forwarded_allow_ips)

    async def serve(self, sockets: Any = None) -> None:
        """uvicorn's ``serve``, remembering the loop the signal handler schedules on."""
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First SIGTERM/SIGINT: drain, then exit. Anything else: uvicorn's handling."""
        lifecycle = find_lifecycle(getattr(self.config, "loaded_app", None))
        first = self._drain is None and not self.should_exit
        if lifecycle is None or self._loop is None or not first or sig not in DRAIN_SIGNALS:
            super().handle_exit(sig, frame)
            return
        self._loop.call_soon_threadsafe(self._start_drain, lifecycle)

    def _start_drain(self, lifecycle: Lifecycle) -> None:
        if self._drain is None:
            self._drain = asyncio.ensure_future(self._drain_then_exit(lifecycle))

    async def _drain_then_exit(self, lifecycle: Lifecycle) -> None:
        try:
            report = await lifecycle.drain()
            LOGGER.warning(
                "drained in %.1f s (%d stream(s) and run(s) ended early); exiting",
                report.seconds,
                report.stopped,
            )
        finally:
            self.should_exit = True

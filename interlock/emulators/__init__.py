"""Provider emulators built on the codecs; they enforce the services' validation rules.

One module per dialect (``openai_responses``, ``openai_chat``, ``gemini``, ``anthropic``)
exports an
``<Name>Emulator`` (a subclass of :class:`~._service.EmulatedService`, the request path
they share) and ``create_app``. This package adds the protocol-keyed factory the
gateway and the CLI use, and a combined app serving several emulators on one port (their
paths never collide).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from interlock.codecs.registry import DialectName, package
from interlock.emulators._brain import DefaultBrain, Rejection, ScriptBrain, ScriptError
from interlock.transcript import JsonObject


class Emulator(Protocol):
    """What every dialect emulator provides (see the emulator contract)."""

    received: list[JsonObject]

    def validate(self, payload: JsonObject) -> Rejection | None: ...

    def routes(self) -> list[BaseRoute]: ...


def create_emulator(
    protocol: DialectName, *, script: str | Path | None = None, **options: Any
) -> Emulator:
    """An emulator for ``protocol``, answering from ``script`` first when given.

    ``offload=True`` answers on a worker thread (for an emulator sharing a process, and an
    event loop, with the gateway).

    Each dialect's module (named like its codec package) exports its class as ``EMULATOR``.
    """
    brain = ScriptBrain.from_file(script) if script is not None else None
    module = importlib.import_module(f"interlock.emulators.{package(protocol)}")
    emulator: Emulator = module.EMULATOR(brain, **options)
    return emulator


def emulator_app(*emulators: Emulator) -> Starlette:
    """One app serving every given emulator's routes."""
    routes: list[BaseRoute] = [route for emulator in emulators for route in emulator.routes()]
    return Starlette(routes=routes)


def combined_routes(emulators: Sequence[Emulator]) -> list[BaseRoute]:
    """The routes of several emulators, for mounting in a larger app."""
    return [route for emulator in emulators for route in emulator.routes()]


__all__ = [
    "DefaultBrain",
    "Emulator",
    "Rejection",
    "ScriptBrain",
    "ScriptError",
    "combined_routes",
    "create_emulator",
    "emulator_app",
]

"""Provider emulators built on the codecs; they enforce the services' validation rules.

One module per dialect (``openai_responses``, ``openai_chat``, ``gemini``) exports an
``<Name>Emulator`` and ``create_app``. This package adds the protocol-keyed factory the
gateway and the CLI use, and a combined app serving several emulators on one port (their
paths never collide).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from interlock.emulators._brain import DefaultBrain, Rejection, ScriptBrain, ScriptError
from interlock.transcript import JsonObject


class Emulator(Protocol):
    """What every dialect emulator provides (see the emulator contract)."""

    received: list[JsonObject]

    def validate(self, payload: JsonObject) -> Rejection | None: ...

    def routes(self) -> list[BaseRoute]: ...


def create_emulator(protocol: str, *, script: str | Path | None = None, **options: Any) -> Emulator:
    """An emulator for ``protocol``, answering from ``script`` first when given."""
    brain = ScriptBrain.from_file(script) if script is not None else None
    if protocol == "openai-responses":
        from interlock.emulators.openai_responses import OpenAIResponsesEmulator

        return OpenAIResponsesEmulator(brain, **options)
    if protocol == "openai-chat":
        from interlock.emulators.openai_chat import OpenAIChatEmulator

        return OpenAIChatEmulator(brain, **options)
    if protocol == "gemini":
        from interlock.emulators.gemini import GeminiEmulator

        return GeminiEmulator(brain, **options)
    raise ValueError(f"unknown protocol {protocol!r}")


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

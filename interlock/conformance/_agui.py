"""The AG-UI codec, adapted to what the runner needs (see :class:`AguiCodec`).

Rendered messages come with the codec's warnings (``encode_messages``) when it reports them.

Opaque payloads are sealed with a fixed conformance key and tenant (sealing is deterministic,
so encoded traces are stable). A vector's ``run`` object gives the run facts: ``threadId``,
``runId``, ``approvalStyle`` (``interrupt`` | ``confirm_changes``), ``clientTools``.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, cast

from interlock.conformance._codecs import AGUI_TARGET, AguiCodec, CodecUnavailable
from interlock.transcript import (
    JsonObject,
    Message,
    Response,
    TranslationWarning,
    response_to_updates,
)

SEAL_KEY = b"interlock-conformance-seal-key"
TENANT = "conformance"
_NEEDED = ("decode_run_input", "messages_to_agui", "AguiEventEncoder")


def agui_codec() -> AguiCodec:
    """The real AG-UI codec; raises :class:`CodecUnavailable` until it exports what is needed."""
    module: Any = importlib.import_module("interlock.codecs.agui")
    missing = [name for name in _NEEDED if not hasattr(module, name)]
    if missing:
        raise CodecUnavailable(f"interlock.codecs.agui does not export {', '.join(missing)}")

    def decode_run_input(payload: JsonObject) -> tuple[Message, ...]:
        decoded = module.decode_run_input(payload, seal_key=SEAL_KEY, tenant=TENANT)
        return cast(tuple[Message, ...], decoded.messages)

    def encode_messages(messages: Sequence[Message]) -> list[JsonObject]:
        encoded = module.messages_to_agui(messages, seal_key=SEAL_KEY, tenant=TENANT)
        return cast(list[JsonObject], encoded)

    def encode_messages_warned(
        messages: Sequence[Message],
    ) -> tuple[list[JsonObject], tuple[TranslationWarning, ...]]:
        encoded = module.encode_messages(messages, seal_key=SEAL_KEY, tenant=TENANT)
        return (
            cast(list[JsonObject], encoded.messages),
            cast(tuple[TranslationWarning, ...], encoded.warnings),
        )

    def encode_events(response: Response, run: JsonObject) -> list[JsonObject]:
        encoder = module.AguiEventEncoder(
            thread_id=str(run.get("threadId", "thread-1")),
            run_id=str(run.get("runId", "run-1")),
            seal_key=SEAL_KEY,
            tenant=TENANT,
            approval_style=run.get("approvalStyle", "interrupt"),
            client_tools=cast(list[str], run.get("clientTools", [])),
        )
        events = cast(list[JsonObject], encoder.start())
        for update in response_to_updates(response):
            events += encoder.encode(update)
        return events + cast(list[JsonObject], encoder.finish())

    return AguiCodec(
        name="agui",
        decode_run_input=decode_run_input,
        encode_messages=encode_messages,
        encode_events=encode_events,
        target=AGUI_TARGET,
        encode_messages_warned=(
            encode_messages_warned if hasattr(module, "encode_messages") else None
        ),
    )

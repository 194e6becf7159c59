"""The AG-UI codec, adapted to what the runner needs (see :class:`AguiCodec`)."""

from __future__ import annotations

import importlib

from interlock.conformance._codecs import AGUI_TARGET, AguiCodec, CodecUnavailable


def agui_codec() -> AguiCodec:
    """The real AG-UI codec; raises :class:`CodecUnavailable` until it exports what is needed."""
    module = importlib.import_module("interlock.codecs.agui")
    raise CodecUnavailable(
        f"{module.__name__} does not export an inbound decoder and event encoder yet"
    )


__all__ = ["AGUI_TARGET", "agui_codec"]

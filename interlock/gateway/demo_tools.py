"""Tools of the embedded demo agent. They touch nothing: the demo must be safe to run."""

from __future__ import annotations

_FORECASTS = {"paris": "sunny, 21 °C", "london": "light rain, 15 °C", "tokyo": "cloudy, 18 °C"}


def get_weather(city: str) -> str:
    """Today's weather for ``city`` (a fixed, made-up forecast)."""
    return _FORECASTS.get(city.strip().lower(), "clear, 20 °C")


def delete_file(path: str) -> str:
    """Pretend to delete ``path``; the demo agent asks for approval before calling it."""
    return f"deleted {path} (demo: nothing was touched)"

"""The config reader's building blocks: one error type naming the key, and a TOML table
consumed key by key so that whatever is left over is an unknown key.

Every config section (``config.py``, ``config_routing.py``) parses through :class:`Table`;
a value of the wrong type or range raises :class:`ConfigError` naming its full key
(``models[2].deployments[0].weight``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast


class ConfigError(ValueError):
    """The configuration is invalid; ``key`` names the offending setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key


_T = TypeVar("_T")


class Table:
    """A TOML table being consumed: every key must be taken, or it is unknown."""

    def __init__(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise ConfigError(path, "expected a table")
        self.values = cast(dict[str, Any], value)
        self.path = path
        self.seen: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def table(self, name: str) -> Table:
        self.seen.add(name)
        return Table(self.values.get(name, {}), self.key(name))

    def tables(self, name: str) -> list[Table]:
        self.seen.add(name)
        entries = self.values.get(name, [])
        if not isinstance(entries, list):
            raise ConfigError(self.key(name), f"expected an array of tables ([[{name}]])")
        return [
            Table(entry, f"{self.key(name)}[{index}]")
            for index, entry in enumerate(cast(list[object], entries))
        ]

    def take(self, spec: Mapping[str, Callable[[Any], Any] | type[Any]]) -> dict[str, Any]:
        """The present keys of ``spec``, each checked; unknown keys raise on :meth:`finish`."""
        out: dict[str, Any] = {}
        for name, kind in spec.items():
            if name not in self.values:
                continue
            self.seen.add(name)
            out[name] = check_type(self.values[name], kind, self.key(name))
        self.finish()
        return out

    def finish(self) -> None:
        unknown = sorted(set(self.values) - self.seen)
        if unknown:
            raise ConfigError(self.key(unknown[0]), "unknown key")


def check_type(value: object, kind: Callable[[Any], Any] | type[Any], key: str) -> Any:
    if isinstance(kind, type):
        valid = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not valid:
            raise ConfigError(key, f"expected {kind.__name__}, got {type(value).__name__}")
        return value
    try:
        return kind(value)
    except ValueError as error:
        raise ConfigError(key, str(error)) from error


def choice(options: Sequence[str]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}; got {value!r}")
        return cast(str, value)

    return check


def strings(value: Any) -> tuple[str, ...]:
    items = cast(list[object], value) if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        raise ValueError("expected a list of strings")
    return tuple(cast(list[str], items))


def positive(kind: type[_T]) -> Callable[[Any], _T]:
    def check(value: Any) -> _T:
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"expected a positive number, got {value!r}")
        return kind(value)  # type: ignore[call-arg]  # int(...) / float(...) of a checked number

    return check


def non_negative_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a non-negative integer, got {value!r}")
    return value

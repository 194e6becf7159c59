"""A routed model's places: its deployments as targets, their shared health, the pick.

A :class:`Target` is one deployment as one route sees it (where to send, its weight, its
round-robin state); its :class:`Health` belongs to the deployment (upstream, model and
key), so every route using it shares it. A :class:`Group` is one model's targets, as the
requested model or as one of its fallbacks, and picks the next one by smooth weighted
round-robin among those not cooling down.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from interlock.gateway.config_routing import RoutingConfig
from interlock.gateway.proxy import Route


@dataclass(slots=True)
class Health:
    """One deployment's recent failures and, when cooled, until when (monotonic seconds).

    ``label`` (``upstream/model``) names it in logs and metrics; ``key`` identifies it
    among processes (``label``, plus the deployment's own key variable when it has one).
    """

    label: str
    key: str = ""
    failures: deque[float] = field(default_factory=deque[float])
    cool_until: float = 0.0

    def available(self, now: float) -> bool:
        """True unless cooling down at ``now``."""
        return now >= self.cool_until

    def fail(self, now: float, policy: RoutingConfig) -> bool:
        """Count a failure; True when it starts a cooldown."""
        horizon = now - policy.failure_window_seconds
        while self.failures and self.failures[0] <= horizon:
            self.failures.popleft()
        self.failures.append(now)
        if len(self.failures) < policy.failures_to_cool:
            return False
        self.failures.clear()
        self.cool_until = now + policy.cooldown_seconds
        return True


@dataclass(slots=True, eq=False)
class Target:
    """One deployment as one route sees it: where to send, its weight, its shared health."""

    route: Route
    weight: int
    health: Health
    current: int = 0
    """Smooth weighted round-robin state, per route."""


@dataclass(slots=True)
class Group:
    """A model's deployments, as the requested model or as one of its fallbacks."""

    name: str
    targets: tuple[Target, ...]
    retries: int
    fallback: bool

    def pick(self, now: float, failed: set[Target], skipped: set[Target]) -> Target | None:
        """The next deployment: weighted, available, untried first; ``None`` if none is left."""
        usable = [t for t in self.targets if t not in skipped and t.health.available(now)]
        fresh = [t for t in usable if t not in failed]
        return _smooth_weighted(fresh or usable)


def _smooth_weighted(candidates: list[Target]) -> Target | None:
    """Nginx's smooth weighted round-robin over ``candidates`` (mutates their state)."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    total = 0
    best = candidates[0]
    for target in candidates:
        target.current += target.weight
        total += target.weight
        if target.current > best.current:
            best = target
    best.current -= total
    return best

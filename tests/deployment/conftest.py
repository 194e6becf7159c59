"""Deployment tests share the gateway tests' private redis-server fixture."""

from tests.gateway.conftest import redis_url

__all__ = ["redis_url"]

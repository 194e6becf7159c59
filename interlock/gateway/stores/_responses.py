"""Which upstream holds each stored Responses answer, per tenant.

A ``GET /v1/responses/{id}`` carries no model, so the gateway cannot route it; it asks
this index, filled as answers pass through the proxy. Entries are keyed by tenant, so a
tenant finds only the responses it created. Each entry expires :data:`~interlock.gateway.stores._expiring.TTL_SECONDS` after
it was written (the Responses API's own retention is 30 days); an expired entry counts as
absent, and every :data:`~interlock.gateway.stores._expiring.SWEEP_EVERY` writes of a process the writing tenant's expired
entries are deleted, so the index stays bounded by what its tenants created within the
expiry.

Conversations (``conv_…`` ids, created by ``POST /v1/conversations``) are owned the other
way round: one entry per conversation, naming the tenant that owns it and the upstream
holding it, so that a tenant can be told a conversation is another's. The first tenant to
use an id through the gateway (creating it, or naming one the gateway never saw) claims it,
atomically: of several tenants racing for one id exactly one wins. A conversation does not
expire at the service, so neither does its entry; deleting the conversation through the
gateway drops it.
"""

from __future__ import annotations

import json

from interlock.gateway.stores._expiring import ExpiringIndex
from interlock.gateway.stores._store import store_key


class ResponseIndex(ExpiringIndex):
    """Response id → upstream name, per tenant, over one backend (module docstring)."""

    namespace = "response"
    member = "upstream"

    async def remember(self, tenant: str, response_id: str, upstream: str) -> None:
        """Note that ``upstream`` holds ``response_id`` for ``tenant`` (renewing its expiry)."""
        key = store_key("response", tenant, response_id)
        await self.backend.set_many({key: self.entry(upstream)})
        await self.written(tenant, 1)

    async def find(self, tenant: str, response_id: str) -> str | None:
        """The upstream holding ``tenant``'s ``response_id``; ``None`` if unknown or expired."""
        return self.value(await self.backend.get(store_key("response", tenant, response_id)))

    async def forget(self, tenant: str, response_id: str) -> None:
        """Drop ``tenant``'s entry for ``response_id`` (deleted upstream)."""
        await self.backend.delete(store_key("response", tenant, response_id))

    async def claim_conversation(
        self, tenant: str, conversation_id: str, upstream: str
    ) -> tuple[str, str]:
        """The ``(tenant, upstream)`` owning ``conversation_id``: ``tenant`` and
        ``upstream`` when nobody did yet (this call claims it), else the owner's."""
        entry = json.dumps({"tenant": tenant, "upstream": upstream}, separators=(",", ":"))
        key = store_key("conversation", conversation_id)
        if await self.backend.add(key, entry):
            return tenant, upstream
        found = await self.conversation(conversation_id)
        return found if found is not None else ("", "")

    async def conversation(self, conversation_id: str) -> tuple[str, str] | None:
        """The ``(tenant, upstream)`` owning ``conversation_id``; ``None`` if unclaimed.

        An unreadable entry reads as owned by nobody that can match a tenant (``""``)."""
        text = await self.backend.get(store_key("conversation", conversation_id))
        if text is None:
            return None
        try:
            document = json.loads(text)
            return str(document["tenant"]), str(document["upstream"])
        except (ValueError, TypeError, KeyError):
            return "", ""

    async def forget_conversation(self, conversation_id: str) -> None:
        """Drop the entry of ``conversation_id`` (deleted upstream)."""
        await self.backend.delete(store_key("conversation", conversation_id))

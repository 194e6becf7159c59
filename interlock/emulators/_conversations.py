"""Conversations of the emulated Responses service (the Conversations API).

``POST /v1/conversations`` creates one (``items`` and ``metadata`` optional) and answers
``{"id": "conv_…", "object": "conversation", "created_at", "metadata"}``; ``GET``,
``POST`` (new ``metadata``) and ``DELETE`` ``/v1/conversations/{id}`` retrieve, update
and delete it (``{"id", "object": "conversation.deleted", "deleted": true}``).
``/v1/conversations/{id}/items`` lists its items (paged as input items are: newest first
unless ``order=asc``, ``limit``, ``after``) and ``POST`` adds ``items`` to it;
``…/items/{item_id}`` retrieves or deletes one (deleting answers the conversation).

A Responses request naming a ``conversation`` continues from its items, and its input and
output are appended to it. An id the service does not hold is a 404 with the service's
text. Conversation ids are random, as the service's are (a gateway's store outlives an
emulator). At most :data:`CONVERSATION_LIMIT` conversations are kept (the oldest goes first).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from interlock.codecs.openai_responses import encode_error
from interlock.emulators._responses_state import State, listing, page_of, with_ids
from interlock.transcript import JsonObject, JsonValue

CONVERSATION_LIMIT = 1024
"""How many conversations the emulator keeps (the most recent ones)."""


@dataclass(slots=True)
class Conversation:
    """One conversation: its object as answered and its items, oldest first."""

    head: JsonObject
    items: list[JsonObject] = field(default_factory=list[JsonObject])


def conversation_not_found(conversation_id: str, param: str | None = None) -> State:
    """The service's 404 for a conversation it does not hold."""
    message = f"Conversation with id '{conversation_id}' not found."
    return 404, encode_error(404, message, param=param)


def _item_not_found(item_id: str) -> State:
    return 404, encode_error(404, f"Item with id '{item_id}' not found.", param=None)


def _bad_items(body: JsonObject, *, required: bool) -> State | list[JsonObject]:
    """The ``items`` of a create/add body, or the service's 400."""
    value = body.get("items")
    if value is None and not required:
        return []
    if not isinstance(value, list):
        kind = "null" if value is None else type(value).__name__
        message = f"Invalid type for 'items': expected an array, but got {kind} instead."
        return 400, encode_error(400, message, param="items", code="invalid_type")
    listed = cast(list[JsonValue], value)
    return [cast(JsonObject, item) for item in listed if isinstance(item, dict)]


class Conversations:
    """The conversations by id, bounded (module docstring)."""

    def __init__(self, limit: int = CONVERSATION_LIMIT) -> None:
        self.limit = limit
        self._held: OrderedDict[str, Conversation] = OrderedDict()
        self._counter = 0

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._held

    def items(self, conversation_id: str) -> list[JsonObject]:
        """The items a response in ``conversation_id`` continues from (empty if unknown)."""
        held = self._held.get(conversation_id)
        return list(held.items) if held is not None else []

    def append(self, conversation_id: str, items: list[JsonObject]) -> None:
        """Add a response's input and output items (already with ids) to the conversation."""
        held = self._held.get(conversation_id)
        if held is not None:
            held.items.extend(items)

    def _stem(self) -> str:
        self._counter += 1
        return f"emu{self._counter:06d}"

    def create(self, body: JsonObject) -> State:
        """``POST /v1/conversations``."""
        items = _bad_items(body, required=False)
        if not isinstance(items, list):
            return items
        stem = self._stem()
        conversation_id = f"conv_{secrets.token_hex(24)}"
        metadata = body.get("metadata")
        head: JsonObject = {
            "id": conversation_id,
            "object": "conversation",
            "created_at": int(time.time()),
            "metadata": metadata if isinstance(metadata, dict) else {},
        }
        self._held[conversation_id] = Conversation(head, with_ids(items, f"c{stem}"))
        while len(self._held) > self.limit:
            self._held.popitem(last=False)
        return 200, head

    def retrieve(self, conversation_id: str) -> State:
        """``GET /v1/conversations/{id}``."""
        held = self._held.get(conversation_id)
        return (200, held.head) if held is not None else conversation_not_found(conversation_id)

    def update(self, conversation_id: str, body: JsonObject) -> State:
        """``POST /v1/conversations/{id}``: new ``metadata``."""
        held = self._held.get(conversation_id)
        if held is None:
            return conversation_not_found(conversation_id)
        metadata = body.get("metadata")
        held.head = {**held.head, "metadata": metadata if isinstance(metadata, dict) else {}}
        return 200, held.head

    def delete(self, conversation_id: str) -> State:
        """``DELETE /v1/conversations/{id}``."""
        if self._held.pop(conversation_id, None) is None:
            return conversation_not_found(conversation_id)
        return 200, {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    def list_items(self, conversation_id: str, query: Mapping[str, str]) -> State:
        """``GET /v1/conversations/{id}/items`` with its pagination parameters."""
        held = self._held.get(conversation_id)
        if held is None:
            return conversation_not_found(conversation_id)
        return page_of(held.items, query)

    def add_items(self, conversation_id: str, body: JsonObject) -> State:
        """``POST /v1/conversations/{id}/items``: the added items, listed."""
        held = self._held.get(conversation_id)
        if held is None:
            return conversation_not_found(conversation_id)
        items = _bad_items(body, required=True)
        if not isinstance(items, list):
            return items
        added = with_ids(items, f"c{self._stem()}")
        held.items.extend(added)
        return 200, listing(added, has_more=False)

    def item(self, conversation_id: str, item_id: str, *, delete: bool) -> State:
        """``GET`` / ``DELETE`` ``/v1/conversations/{id}/items/{item_id}``."""
        held = self._held.get(conversation_id)
        if held is None:
            return conversation_not_found(conversation_id)
        for index, item in enumerate(held.items):
            if item.get("id") == item_id:
                if not delete:
                    return 200, item
                del held.items[index]
                return 200, held.head
        return _item_not_found(item_id)

"""Stored responses of the emulated Responses service, and its state endpoints.

A response created with ``store`` true (the service's default) is kept: ``GET
/v1/responses/{id}`` returns it as it was answered, ``DELETE`` removes it (``{"id",
"object": "response", "deleted": true}``), ``GET …/input_items`` lists the items that
produced it (the earlier turns of a ``previous_response_id`` chain included), each with an
id, newest first unless ``order=asc``, ``limit`` (1–100, default 20) per page and ``after``
an item id. An id the service does not hold is a 404 with the service's text.

A response created with ``background`` true answers at once with status ``queued`` and
no output; the emulator does the work when the response is first retrieved (so tests see
each state without waiting on a clock), after which it reads ``completed``. ``POST
/v1/responses/{id}/cancel`` turns a still-queued background response into ``cancelled``
(its work is dropped) and answers it; a finished background response is answered as it
is; a response not created in the background is the service's 400.

At most :data:`STORED_LIMIT` responses are kept, holding at most :data:`STORED_ITEMS`
items in all (the oldest goes first; the newest is always kept), so a long-running
emulator's memory stays bounded, and so does the time Python's full garbage collections
take to walk what it holds (1,024 chains of 2,000 items made pauses of up to 0.6 s).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from interlock.codecs.openai_responses import encode_error
from interlock.transcript import JsonObject, JsonValue

STORED_LIMIT = 1024
"""How many stored responses the emulator keeps (the most recent ones)."""
STORED_ITEMS = 50_000
"""How many items (chain and inputs) the stored responses hold at most, in all."""
DEFAULT_LIMIT = 20
MAX_LIMIT = 100

State = tuple[int, JsonObject]
"""A state endpoint's answer: status and JSON body."""


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """One stored response: its chain of items and the response object as answered."""

    items: list[JsonObject]
    """Every item up to and including its output (what ``previous_response_id`` continues)."""
    inputs: list[JsonObject]
    """The items that produced it, with ids (what ``input_items`` lists), oldest first."""
    response: JsonObject


def not_found(response_id: str) -> State:
    """The service's 404 for a response it does not hold."""
    message = f"Response with id '{response_id}' not found."
    return 404, encode_error(404, message, param=None)


def with_ids(items: list[JsonObject], stem: str) -> list[JsonObject]:
    """``items`` as the service lists them: every item with an id and a type, message
    content as a list of parts (a string becomes one ``input_text`` part)."""
    listed: list[JsonObject] = []
    for index, item in enumerate(items):
        entry = dict(item)
        kind = entry.get("type")
        if kind is None and "role" in entry:
            entry["type"] = kind = "message"
        if kind == "message" and isinstance(entry.get("content"), str):
            part = "output_text" if entry.get("role") == "assistant" else "input_text"
            entry["content"] = [{"type": part, "text": entry["content"]}]
        if not isinstance(entry.get("id"), str):
            prefix = "msg" if kind == "message" else "item"
            entry["id"] = f"{prefix}_{stem}_in{index}"
        listed.append(entry)
    return listed


class StoredResponses:
    """The stored responses by id, bounded (see the module docstring)."""

    def __init__(self, limit: int = STORED_LIMIT, items: int = STORED_ITEMS) -> None:
        self.limit = limit
        self.items = items
        self._held: OrderedDict[str, StoredResponse] = OrderedDict()
        self._held_items = 0
        """Items of every held response (see :func:`_size`)."""
        self._queued: dict[str, JsonObject] = {}
        """Background responses not yet worked on: id → the response once done."""

    def __contains__(self, response_id: object) -> bool:
        return response_id in self._held

    def __iter__(self) -> Iterator[str]:
        """The stored response ids, oldest first."""
        return iter(self._held)

    def __getitem__(self, response_id: str) -> StoredResponse:
        return self._held[response_id]

    def __len__(self) -> int:
        return len(self._held)

    def chain(self, response_id: str) -> list[JsonObject]:
        """The items a continuation of ``response_id`` starts from (empty if unknown)."""
        held = self._held.get(response_id)
        return list(held.items) if held is not None else []

    def keep(self, response_id: str, stored: StoredResponse) -> None:
        """Store ``stored``; the oldest responses go while more than the limits are held."""
        self._forget(response_id)
        self._held[response_id] = stored
        self._held_items += _size(stored)
        while len(self._held) > self.limit or (
            self._held_items > self.items and len(self._held) > 1
        ):
            self._forget(next(iter(self._held)))

    def _forget(self, response_id: str) -> bool:
        """Drop ``response_id`` (and its queued work); False if it was not held."""
        held = self._held.pop(response_id, None)
        if held is None:
            return False
        self._held_items -= _size(held)
        self._queued.pop(response_id, None)
        return True

    def keep_background(self, response_id: str, stored: StoredResponse) -> JsonObject:
        """Store ``stored`` as a queued background response; the queued response object."""
        done: JsonObject = {**stored.response, "background": True}
        queued: JsonObject = {**done, "status": "queued", "output": [], "usage": None}
        self.keep(response_id, replace(stored, response=queued))
        self._queued[response_id] = done
        return queued

    def retrieve(self, response_id: str) -> State:
        """``GET /v1/responses/{id}`` (a queued background response is worked on first)."""
        held = self._held.get(response_id)
        if held is None:
            return not_found(response_id)
        done = self._queued.pop(response_id, None)
        if done is not None:
            held = self._held[response_id] = replace(held, response=done)
        return 200, held.response

    def cancel(self, response_id: str) -> State:
        """``POST /v1/responses/{id}/cancel``."""
        held = self._held.get(response_id)
        if held is None:
            return not_found(response_id)
        if held.response.get("background") is not True:
            message = "Only responses created with background=true can be cancelled."
            return 400, encode_error(400, message, param=None)
        if self._queued.pop(response_id, None) is not None:
            cancelled: JsonObject = {**held.response, "status": "cancelled"}
            self._held[response_id] = replace(held, response=cancelled)
            return 200, cancelled
        return 200, held.response

    def delete(self, response_id: str) -> State:
        """``DELETE /v1/responses/{id}``."""
        if not self._forget(response_id):
            return not_found(response_id)
        return 200, {"id": response_id, "object": "response", "deleted": True}

    def input_items(self, response_id: str, query: Mapping[str, str]) -> State:
        """``GET /v1/responses/{id}/input_items`` with its pagination parameters."""
        held = self._held.get(response_id)
        if held is None:
            return not_found(response_id)
        return page_of(held.inputs, query)


def _size(stored: StoredResponse) -> int:
    """What a stored response counts against :data:`STORED_ITEMS`."""
    return len(stored.items) + len(stored.inputs)


def listing(items: list[JsonObject], *, has_more: bool) -> JsonObject:
    """``items`` as a list object of the service."""
    data: list[JsonValue] = list(items)
    return {
        "object": "list",
        "data": data,
        "first_id": items[0].get("id") if items else None,
        "last_id": items[-1].get("id") if items else None,
        "has_more": has_more,
    }


def page_of(items: list[JsonObject], query: Mapping[str, str]) -> State:
    """One page of ``items`` (oldest first) as ``query`` asks (``limit``, ``order``,
    ``after``), or the service's 400 for a bad value."""
    page = _page_options(query)
    if not isinstance(page, _Page):
        return page
    ordered = items if page.order == "asc" else items[::-1]
    if page.after is not None:
        ids = [item.get("id") for item in ordered]
        ordered = ordered[ids.index(page.after) + 1 :] if page.after in ids else []
    return 200, listing(ordered[: page.limit], has_more=len(ordered) > page.limit)


@dataclass(frozen=True, slots=True)
class _Page:
    limit: int
    order: str
    after: str | None


def _page_options(query: Mapping[str, str]) -> _Page | State:
    """The page asked for, or the service's 400 for a bad value."""
    text = query.get("limit", str(DEFAULT_LIMIT))
    try:
        limit = int(text)
    except ValueError:
        message = f"Invalid 'limit': expected an integer, but got '{text}' instead."
        return 400, encode_error(400, message, param="limit", code="invalid_type")
    if limit < 1:
        message = f"Invalid 'limit': integer below minimum value. Expected a value >= 1, but got {limit} instead."
        return 400, encode_error(400, message, param="limit", code="integer_below_min_value")
    if limit > MAX_LIMIT:
        message = f"Invalid 'limit': integer above maximum value. Expected a value <= {MAX_LIMIT}, but got {limit} instead."
        return 400, encode_error(400, message, param="limit", code="integer_above_max_value")
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        message = f"Invalid value: '{order}'. Supported values are: 'asc' and 'desc'."
        return 400, encode_error(400, message, param="order", code="invalid_value")
    return _Page(limit, order, query.get("after"))

"""The codec's ``metadata["interlock"]`` labels: written only when needed, read strictly."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from interlock.codecs.agui import seal, unseal
from interlock.codecs.agui._labels import (
    LABEL_KEY,
    call_labels,
    content_layout,
    needs_layout,
    read_call_labels,
    read_layout,
    read_reasoning_labels,
    read_result_labels,
    reasoning_labels,
    result_labels,
    split_labels,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    Opaque,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

from .scenarios import ENCRYPTED, KEY, SIGNATURE


def sealer(opaque: Opaque) -> str:
    return seal(opaque, key=KEY, tenant="acme")


def opener(value: str, path: str) -> Opaque:
    del path
    return unseal(value, key=KEY, tenant="acme")


def read(content: str, layout: JsonValue, *, refusals: bool = True) -> list[TextPart | RefusalPart]:
    parts = read_layout(content, {"content": layout}, "messages[0]", opener, refusals=refusals)
    assert parts is not None
    return parts


def test_a_single_plain_text_needs_no_layout() -> None:
    assert not needs_layout([TextPart(text="hi")])
    assert not needs_layout([])
    assert needs_layout([RefusalPart(text="no")])
    assert needs_layout([TextPart(text="a"), TextPart(text="b")])


def test_a_layout_gives_back_every_part_with_its_signature() -> None:
    parts = [
        TextPart(text="Sure. "),
        RefusalPart(text="But not that."),
        TextPart(text=""),
        TextPart(text=" Done ✓", signature=SIGNATURE),
    ]
    layout = content_layout(parts, sealer)
    assert [entry["type"] for entry in layout] == ["text", "refusal", "text", "text"]  # type: ignore[index]  # JSON
    assert [entry["length"] for entry in layout] == [6, 13, 0, 7]  # type: ignore[index]  # JSON
    assert read("".join(part.text for part in parts), layout) == parts


def test_without_a_layout_label_nothing_is_read() -> None:
    assert read_layout("text", {}, "messages[0]", opener, refusals=True) is None


@dataclass(frozen=True, slots=True)
class BadLayout:
    id: str
    content: str
    layout: JsonValue
    path: str
    refusals: bool = True


WHERE = f"messages[0].metadata.{LABEL_KEY}.content"
BAD_LAYOUTS = [
    BadLayout("not-a-list", "ab", {"type": "text"}, WHERE),
    BadLayout("empty", "", [], WHERE),
    BadLayout("entry-not-object", "ab", ["text"], f"{WHERE}[0]"),
    BadLayout("unknown-type", "ab", [{"type": "json", "length": 2}], f"{WHERE}[0].type"),
    BadLayout("negative", "ab", [{"type": "text", "length": -1}], f"{WHERE}[0].length"),
    BadLayout("boolean-length", "a", [{"type": "text", "length": True}], f"{WHERE}[0].length"),
    BadLayout("past-the-end", "ab", [{"type": "text", "length": 3}], f"{WHERE}[0].length"),
    BadLayout("short", "abc", [{"type": "text", "length": 2}], WHERE),
    BadLayout(
        "refusal-in-system",
        "ab",
        [{"type": "refusal", "length": 2}],
        f"{WHERE}[0].type",
        refusals=False,
    ),
    BadLayout(
        "signed-refusal",
        "ab",
        [{"type": "refusal", "length": 2, "encryptedValue": "x"}],
        f"{WHERE}[0].type",
    ),
    BadLayout(
        "signature-not-string",
        "ab",
        [{"type": "text", "length": 2, "encryptedValue": 7}],
        f"{WHERE}[0].encryptedValue",
    ),
]


@pytest.mark.parametrize("case", BAD_LAYOUTS, ids=[case.id for case in BAD_LAYOUTS])
def test_a_layout_this_codec_did_not_write_is_refused_with_its_path(case: BadLayout) -> None:
    with pytest.raises(DecodeError) as caught:
        read(case.content, case.layout, refusals=case.refusals)
    assert caught.value.path == case.path


def test_reasoning_labels_only_when_the_seal_does_not_say_it() -> None:
    assert reasoning_labels(ReasoningPart(reasoning_kind="summary", text="s")) is None
    summary = ReasoningPart(reasoning_kind="summary", text="s", item_id="rs_1")
    assert reasoning_labels(summary) is None, "pinned by agui/events_reasoning_text_tool_call"
    sealed = ReasoningPart(reasoning_kind="raw", text="r", opaque=ENCRYPTED, item_id="rs_1")
    assert reasoning_labels(sealed) is None
    raw = ReasoningPart(reasoning_kind="raw", text="r", item_id="rs_1")
    labels = reasoning_labels(raw)
    assert labels == {"reasoningKind": "raw", "itemId": "rs_1"}
    assert read_reasoning_labels(labels, "messages[0]") == ("raw", "rs_1")
    assert read_reasoning_labels({}, "messages[0]") == ("summary", None)


@pytest.mark.parametrize(
    ("labels", "field"),
    [({"reasoningKind": "deep"}, "reasoningKind"), ({"itemId": 3}, "itemId")],
)
def test_bad_reasoning_labels_are_refused(labels: JsonObject, field: str) -> None:
    with pytest.raises(DecodeError) as caught:
        read_reasoning_labels(labels, "messages[1]")
    assert caught.value.path == f"messages[1].metadata.{LABEL_KEY}.{field}"


def test_hosted_calls_are_labelled_and_read_back() -> None:
    local = ToolCallPart(call_id="c", name="f")
    hosted = ToolCallPart(call_id="c", name="f", owner="hosted", server_label="deepwiki")
    assert call_labels(local) is None
    labels = call_labels(hosted)
    assert labels == {"owner": "hosted", "serverLabel": "deepwiki"}
    assert read_call_labels(labels, "c") == (True, "deepwiki")
    assert read_call_labels({}, "c") == (False, None)
    with pytest.raises(DecodeError):
        read_call_labels({"owner": "local"}, "c")


def test_labels_are_split_from_the_clients_own_metadata() -> None:
    metadata: JsonValue = {"source": "web", LABEL_KEY: {"reasoningKind": "raw"}}
    assert split_labels(metadata, "m.metadata") == ({"reasoningKind": "raw"}, {"source": "web"})
    assert split_labels({LABEL_KEY: {}}, "m.metadata") == ({}, None)
    assert split_labels(None, "m.metadata") == ({}, None)
    with pytest.raises(DecodeError) as caught:
        split_labels({LABEL_KEY: "raw"}, "m.metadata")
    assert caught.value.path == f"m.metadata.{LABEL_KEY}"


@pytest.mark.parametrize("outcome", ["success", "failed", "denied", "interrupted"])
def test_an_outcome_the_wire_cannot_say_is_labelled(outcome: str) -> None:
    result = ToolResultPart(call_id="c", outcome=outcome)  # type: ignore[arg-type]  # literal
    in_message = result_labels(result, error_field=True)
    streamed = result_labels(result, error_field=False)
    assert in_message == (None if outcome in ("success", "failed") else {"outcome": outcome})
    assert streamed == (None if outcome == "success" else {"outcome": outcome})
    has_error = outcome != "success"
    assert read_result_labels(in_message or {}, "m", has_error=has_error) == outcome
    assert read_result_labels(streamed or {}, "m", has_error=False) == outcome


def test_an_unknown_outcome_label_is_refused() -> None:
    with pytest.raises(DecodeError) as caught:
        read_result_labels({"outcome": "success"}, "messages[2]", has_error=False)
    assert caught.value.path == f"messages[2].metadata.{LABEL_KEY}.outcome"

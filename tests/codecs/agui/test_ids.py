"""The id scheme classifies answers by id alone."""

from __future__ import annotations

from interlock.codecs.agui import (
    approval_interrupt_id,
    confirm_changes_call_id,
    input_interrupt_id,
    parse_confirm_changes_call_id,
    parse_interrupt_id,
)


def test_interrupt_ids_round_trip() -> None:
    assert parse_interrupt_id(approval_interrupt_id("ap:1")) == ("approval", "ap:1")
    assert parse_interrupt_id(input_interrupt_id("req-7")) == ("input", "req-7")


def test_foreign_and_empty_interrupt_ids_are_unknown() -> None:
    assert parse_interrupt_id("call_1") is None
    assert parse_interrupt_id("approval:") is None
    assert parse_interrupt_id("input:") is None


def test_confirm_changes_ids_round_trip() -> None:
    assert parse_confirm_changes_call_id(confirm_changes_call_id("ap1")) == "ap1"
    assert parse_confirm_changes_call_id("confirm_changes:") is None
    assert parse_confirm_changes_call_id("call_1") is None

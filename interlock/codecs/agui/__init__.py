"""The AG-UI 1.0 codec: ``RunAgentInput`` in, AG-UI events out. Pure, no I/O.

Inbound, :func:`decode_run_input` validates a ``RunAgentInput`` and maps it to transcript
messages, client-owned tool specs and interrupt answers. Outbound, one
:class:`AguiEventEncoder` per run turns transcript updates and run facts into AG-UI
events (JSON-ready dicts). :func:`encode_messages` renders a thread for
``MESSAGES_SNAPSHOT`` and reports what the view could not show (:func:`messages_to_agui`
is the same without the warnings). Opaque provider payloads cross the browser only sealed
(:func:`seal` / :func:`unseal`). See ``docs/codecs/agui.md``.
"""

from interlock.codecs.agui._approvals import APPROVAL_RESPONSE_SCHEMA
from interlock.codecs.agui._context import application_block
from interlock.codecs.agui._encoder import AguiEventEncoder, ApprovalStyle, RunOutcome
from interlock.codecs.agui._hydrate import open_interrupts, thread_view
from interlock.codecs.agui._ids import (
    CONFIRM_CHANGES_TOOL,
    InterruptKind,
    approval_interrupt_id,
    confirm_changes_call_id,
    derived_base,
    held_message_ids,
    input_interrupt_id,
    parse_confirm_changes_call_id,
    parse_interrupt_id,
    stamp_result_ids,
)
from interlock.codecs.agui._input import ContextEntry, RunInput, decode_run_input
from interlock.codecs.agui._seal import SealError, Unsealed, open_sealed, seal, unseal
from interlock.codecs.agui._snapshot import (
    DECLINED_TEXT,
    EncodedMessages,
    clean_confirm_changes,
    encode_messages,
    messages_to_agui,
)
from interlock.codecs.agui._streams import EncoderStateError
from interlock.codecs.agui._verify import EventSequenceError, verify_events
from interlock.codecs.agui._window import SNAPSHOT_LIMIT, window_messages
from interlock.codecs.agui._wire import DIALECT, compact_json

__all__ = [
    "APPROVAL_RESPONSE_SCHEMA",
    "CONFIRM_CHANGES_TOOL",
    "DECLINED_TEXT",
    "DIALECT",
    "SNAPSHOT_LIMIT",
    "AguiEventEncoder",
    "ApprovalStyle",
    "ContextEntry",
    "EncodedMessages",
    "EncoderStateError",
    "EventSequenceError",
    "InterruptKind",
    "RunInput",
    "RunOutcome",
    "SealError",
    "Unsealed",
    "application_block",
    "approval_interrupt_id",
    "clean_confirm_changes",
    "compact_json",
    "confirm_changes_call_id",
    "decode_run_input",
    "derived_base",
    "encode_messages",
    "held_message_ids",
    "input_interrupt_id",
    "messages_to_agui",
    "open_interrupts",
    "open_sealed",
    "parse_confirm_changes_call_id",
    "parse_interrupt_id",
    "seal",
    "stamp_result_ids",
    "thread_view",
    "unseal",
    "verify_events",
    "window_messages",
]

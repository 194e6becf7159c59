"""The outbound half: transcript updates and run facts → AG-UI 1.0 events.

:class:`AguiEventEncoder` is a sans-I/O state machine, one per run. Its guarantees,
each checked against the official client's ``verifyEvents`` rules:

- the first event is ``RUN_STARTED`` (``protocolVersion "1.0"``) or ``RUN_ERROR``, and
  exactly one terminal event (``RUN_FINISHED`` or ``RUN_ERROR``) ends the run, carrying
  the run's ids; nothing is accepted after it;
- every text message, reasoning message, reasoning span and tool call it opened is closed
  before ``RUN_FINISHED`` (the encoder closes leftovers itself);
- content and argument deltas are never empty; optional fields are omitted, never null;
  timestamps are integer milliseconds from the injected clock, or absent;
- tool calls carry ``parentMessageId``: the assistant message of their model step;
- opaque provider payloads leave only sealed, as ``REASONING_ENCRYPTED_VALUE``;
- what AG-UI has no field for rides in ``metadata["interlock"]`` on the ``*_END`` (or
  ``TOOL_CALL_START``) event, which the client merges into the message or call it keeps:
  the text/refusal layout of a message, a reasoning kind, a hosted call's owner, a
  failed tool result's outcome (on ``TOOL_CALL_RESULT``).

Ids are stable: given the id under which the gateway stores a model step (``encode(…,
message_id=)``) or a tool message (``tool_result(…, message_id=)``), the encoder streams
exactly the ids a later ``MESSAGES_SNAPSHOT`` of the stored thread shows: the step's
assistant message under that id, its reasoning messages as ``{id}:r{part index}``, a
tool result under the tool message's id (the first result) or ``{id}:t{n}`` (the others,
which :attr:`AguiEventEncoder.result_message_ids` reports for the gateway to store with
them). Ids derived from a stored id (``{id}:{a|r|s|t}{n}``, see
:func:`~interlock.codecs.agui._ids.derived_base`) never name a message of their own.
Without a given id the encoder mints ``{runId}:{a|r|s|t}{n}``. Tool calls keep the
provider ``call_id``.

The part streams of a model step (opening, deltas, closing, ids, layout labels) live in
:class:`~interlock.codecs.agui._streams.StepStreams`, which the encoder extends with the
run's lifecycle, its facts and the dispatch of stream updates.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Literal, TypeAlias, TypeVar, assert_never

from interlock.codecs.agui import _events
from interlock.codecs.agui._approvals import (
    approval_interrupt,
    confirm_changes_arguments,
    input_interrupt,
)
from interlock.codecs.agui._ids import CONFIRM_CHANGES_TOOL, confirm_changes_call_id
from interlock.codecs.agui._labels import (
    LABEL_KEY,
    call_labels,
    result_labels,
)
from interlock.codecs.agui._streams import (
    EncoderStateError,
    OpenPart,
    StepStreams,
    labelled,
    streamed_text,
)
from interlock.codecs.agui._wire import output_to_content
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    CandidateUpdate,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    Part,
    PartDelta,
    PartFinished,
    PartStarted,
    ReasoningPart,
    RefusalPart,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Update,
    Usage,
    UsageUpdate,
    to_json,
)

ApprovalStyle: TypeAlias = Literal["interrupt", "confirm_changes"]
RunOutcome: TypeAlias = Literal["success", "cancelled"]
_Phase: TypeAlias = Literal["new", "running", "ended"]
_P = TypeVar("_P", bound=Part)


class AguiEventEncoder(StepStreams):
    """Encodes one AG-UI run. Call :meth:`start`, then the feed methods, then one end.

    ``seal_key``/``tenant`` seal opaque payloads (required only if one appears).
    ``approval_style`` picks how approval requests surface. ``client_tools`` names the
    frontend tools: their calls left unanswered are the success outcome's
    ``pendingToolCallIds``. ``clock`` returns integer epoch milliseconds. Approvals of
    ``fixed_tools`` offer no ``editedArgs`` in their interrupt's ``responseSchema``.
    """

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        seal_key: bytes | None = None,
        tenant: str = "",
        approval_style: ApprovalStyle = "interrupt",
        client_tools: Collection[str] = (),
        clock: Callable[[], int] | None = None,
        provider: str | None = None,
        parent_run_id: str | None = None,
        fixed_tools: Collection[str] = (),
    ) -> None:
        super().__init__(
            run_id=run_id,
            seal_key=seal_key,
            tenant=tenant,
            client_tools=client_tools,
            clock=clock,
        )
        self.thread_id = thread_id
        self._approval_style: ApprovalStyle = approval_style
        self._provider = provider
        self._parent_run_id = parent_run_id
        self._fixed_tools = frozenset(fixed_tools)
        self._phase: _Phase = "new"
        self._step_usage: Usage | None = None
        self._usage: dict[tuple[str | None, str | None], Usage] = {}
        self._answered: set[str] = set()
        self._interrupts: list[JsonObject] = []
        self._confirm_calls: list[str] = []
        self._result_ids: dict[tuple[str, str], str] = {}
        self._results_per_message: dict[str, int] = {}

    # ----------------------------------------------------------------- state

    @property
    def ended(self) -> bool:
        """True once the terminal event was produced."""
        return self._phase == "ended"

    @property
    def result_message_ids(self) -> dict[tuple[str, str], str]:
        """``(tool message id, call id) → streamed tool-result message id`` for every result
        streamed with a given ``message_id`` (store them with the results; see module doc)."""
        return dict(self._result_ids)

    def _require_running(self) -> None:
        if self._phase == "new":
            raise EncoderStateError("the run has not started: call start() first")
        if self._phase == "ended":
            raise EncoderStateError("the run already ended with its terminal event")

    # ------------------------------------------------------------- lifecycle

    def start(self) -> list[JsonObject]:
        """``RUN_STARTED``; must come first (or :meth:`fail` instead)."""
        if self._phase != "new":
            raise EncoderStateError("the run already started")
        self._phase = "running"
        return [self._stamp(_events.run_started(self.thread_id, self.run_id, self._parent_run_id))]

    def finish(
        self,
        *,
        outcome: RunOutcome = "success",
        pending_tool_call_ids: Sequence[str] | None = None,
        result: JsonValue = None,
    ) -> list[JsonObject]:
        """Close whatever is open, then ``RUN_FINISHED``.

        The outcome is ``cancelled`` when asked, else ``interrupt`` when approvals (style
        ``interrupt``) or input requests are pending, else ``success`` with the pending
        frontend and ``confirm_changes`` calls (``pending_tool_call_ids`` overrides them).
        Emit ``STATE_SNAPSHOT``/``MESSAGES_SNAPSHOT`` *before* an interrupting finish.
        """
        self._require_running()
        events = self._end_step()
        wire_outcome: JsonObject
        if outcome == "cancelled":
            wire_outcome = {"type": "cancelled"}
        elif self._interrupts:
            wire_outcome = {"type": "interrupt", "interrupts": list(self._interrupts)}
        else:
            pending = list(
                self._pending_calls() if pending_tool_call_ids is None else pending_tool_call_ids
            )
            wire_outcome = {"type": "success"}
            if pending:
                wire_outcome["pendingToolCallIds"] = list[JsonValue](pending)
        self._phase = "ended"
        fields: dict[str, JsonValue] = {
            "threadId": self.thread_id,
            "runId": self.run_id,
            "result": result,
            "outcome": wire_outcome,
            "usage": self._usage_entries(),
        }
        events.append(self._emit("RUN_FINISHED", fields))
        return events

    def fail(
        self, message: str, *, code: str | None = None, labels: JsonObject | None = None
    ) -> list[JsonObject]:
        """``RUN_ERROR``: the terminal event of a failed run (allowed before :meth:`start`);
        ``labels`` go in its ``metadata.interlock``."""
        if self._phase == "ended":
            raise EncoderStateError("the run already ended with its terminal event")
        self._commit_usage()
        self._phase = "ended"
        fields: dict[str, JsonValue] = {
            "message": message,
            "code": code,
            "usage": self._usage_entries(),
            "metadata": labelled(labels),
        }
        return [self._emit("RUN_ERROR", fields)]

    def _pending_calls(self) -> list[str]:
        pending = [call for call in self._client_calls if call not in self._answered]
        return pending + [call for call in self._confirm_calls if call not in self._answered]

    def _usage_entries(self) -> JsonValue:
        entries: list[JsonValue] = [
            _events.token_usage(usage, model=model, provider=provider)
            for (model, provider), usage in self._usage.items()
        ]
        return entries or None

    # ------------------------------------------------------------ run facts

    def tool_result(
        self, result: ToolResultPart, *, message_id: str | None = None
    ) -> list[JsonObject]:
        """``TOOL_CALL_RESULT`` for a finished call (closing the call first if still open).

        ``message_id`` is the stored tool message the result belongs to (module docstring).
        """
        self._require_running()
        events = self._close_call(result.call_id)
        self._answered.add(result.call_id)
        fields: dict[str, JsonValue] = {
            "messageId": self._result_id(result.call_id, message_id),
            "toolCallId": result.call_id,
            "content": output_to_content(result.output),
            "role": "tool",
            "metadata": labelled(result_labels(result, error_field=False)),
        }
        events.append(self._emit("TOOL_CALL_RESULT", fields))
        return events

    def _result_id(self, call_id: str, message_id: str | None) -> str:
        if message_id is None:
            return self._mint("t")
        seen = self._results_per_message.get(message_id, 0)
        self._results_per_message[message_id] = seen + 1
        wire_id = message_id if seen == 0 else f"{message_id}:t{seen}"
        self._result_ids[(message_id, call_id)] = wire_id
        return wire_id

    def approval_request(self, request: ApprovalRequestPart) -> list[JsonObject]:
        """Surface an approval: an interrupt at finish, or a ``confirm_changes`` call now."""
        self._require_running()
        events = self._close_call(request.call.call_id)
        if self._approval_style == "interrupt":
            editable = request.call.name not in self._fixed_tools
            self._interrupts.append(approval_interrupt(request, editable=editable))
            return events
        call_id = confirm_changes_call_id(request.approval_id)
        parent = self._call_parents.get(request.call.call_id) or self._message_id
        parent = parent or self._mint("a")
        self._confirm_calls.append(call_id)
        start: dict[str, JsonValue] = {
            "toolCallId": call_id,
            "toolCallName": CONFIRM_CHANGES_TOOL,
            "parentMessageId": parent,
            "metadata": labelled(call_labels(request.call)),
        }
        args: dict[str, JsonValue] = {
            "toolCallId": call_id,
            "delta": confirm_changes_arguments(request.call),
        }
        events.append(self._emit("TOOL_CALL_START", start))
        events.append(self._emit("TOOL_CALL_ARGS", args))
        events.append(self._emit("TOOL_CALL_END", {"toolCallId": call_id}))
        return events

    def input_request(self, request: InputRequestPart) -> list[JsonObject]:
        """Surface a tool's request for input: an ``input_required`` interrupt at finish."""
        self._require_running()
        self._interrupts.append(input_interrupt(request))
        return []

    def state_snapshot(self, snapshot: JsonValue) -> list[JsonObject]:
        """``STATE_SNAPSHOT``: the agent state, wholesale."""
        self._require_running()
        return [self._emit("STATE_SNAPSHOT", {"snapshot": snapshot})]

    def state_delta(self, operations: Sequence[JsonObject]) -> list[JsonObject]:
        """``STATE_DELTA`` (RFC 6902); nothing for an empty patch; ``ValueError`` if malformed."""
        self._require_running()
        _events.check_patch(operations)
        if not operations:
            return []
        return [self._emit("STATE_DELTA", {"delta": list[JsonValue](operations)})]

    def messages_snapshot(
        self, messages: Sequence[JsonObject], *, omitted: int = 0
    ) -> list[JsonObject]:
        """``MESSAGES_SNAPSHOT`` (build ``messages`` with ``messages_to_agui``).

        ``omitted`` counts older messages a windowed snapshot leaves out; it travels as
        ``metadata.interlock.omittedMessages`` (absent when 0).
        """
        self._require_running()
        fields: dict[str, JsonValue] = {"messages": list[JsonValue](messages)}
        if omitted:
            fields["metadata"] = {LABEL_KEY: {"omittedMessages": omitted}}
        return [self._emit("MESSAGES_SNAPSHOT", fields)]

    def custom(self, name: str, value: JsonValue) -> list[JsonObject]:
        """``CUSTOM`` (``value`` may be ``null``: it is required, so it is always written)."""
        self._require_running()
        built = self._emit("CUSTOM", {"name": name})
        built["value"] = value
        return [built]

    # ---------------------------------------------------------- model steps

    def encode(self, update: Update, *, message_id: str | None = None) -> list[JsonObject]:
        """Events for one stream update of the current model step.

        ``message_id`` is the id under which the step is stored (module docstring).
        """
        if self._phase != "running":
            self._require_running()  # raises
        if message_id is not None:
            self._step_base = message_id
        if type(update) is PartDelta:  # most updates: matched first without a pattern
            open_part, delta = self._open.get(update.index), update.delta
            if open_part is None or open_part.stream != "text" or not delta:
                return self._part_delta(update.index, delta)
            # _part_delta of a text part without its call (once per streamed delta)
            open_part.chunks.append(delta)
            built: JsonObject = {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": open_part.wire_id,
                "delta": delta,
            }
            if self._clock is not None:
                built["timestamp"] = int(self._clock())
            return [built]
        return self._encode_other(update)

    def _encode_other(self, update: Update) -> list[JsonObject]:
        match update:
            case ResponseStarted():
                events = self._end_step()
                self._begin_step(update.model)
                return events
            case PartStarted(index=index, part=part):
                return self._part_started(index, part)
            case PartDelta(index=index, delta=delta):
                return self._part_delta(index, delta)
            case PartFinished(index=index, part=part):
                return self._part_finished(index, part)
            case UsageUpdate(usage=usage):
                self._step_usage = usage
                return []
            case ResponseFinished():
                return self._end_step()
            case StreamFailed(code=code, message=message):
                return self.fail(message, code=code)
            case CandidateUpdate():
                return []  # AG-UI shows one candidate per step
            case _:
                assert_never(update)

    def _end_step(self) -> list[JsonObject]:
        events = self._close_open()
        self._commit_usage()
        self._message_id = None
        return events

    def _commit_usage(self) -> None:
        if self._step_usage is not None:
            key = (self._model, self._provider)
            self._usage[key] = _events.add_usage(self._usage.get(key), self._step_usage)
            self._step_usage = None

    def answered_by(self, provider: str | None) -> None:
        """The provider answering from the next step on (a routed model's fallback may be
        another provider's): its usage is reported under it, not the first deployment's."""
        self._provider = provider

    def _part_started(self, index: int, part: Part) -> list[JsonObject]:
        message_id = self._ensure_step()
        events = self._close(index, self._open[index].part) if index in self._open else []
        self._done.discard(index)
        if not isinstance(part, ReasoningPart):
            events += self._close_span()
        match part:
            case TextPart() | RefusalPart():
                events += self._start_text(index, part)
            case ReasoningPart():
                events += self._start_reasoning(index, part)
            case ToolCallPart():
                events += self._start_call(index, part, message_id)
            case ApprovalRequestPart():
                events += self._once(index, part, self.approval_request)
            case InputRequestPart():
                events += self._once(index, part, self.input_request)
            case ToolResultPart():
                events += self._once(index, part, self.tool_result)
            case (
                JsonPart()
                | MediaPart()
                | HostedToolPart()
                | ApprovalResponsePart()
                | InputResponsePart()
            ):
                events += self._once(index, part, self._other_part)
            case _:
                assert_never(part)
        return events

    def _once(
        self, index: int, part: _P, emit: Callable[[_P], list[JsonObject]]
    ) -> list[JsonObject]:
        self._open[index] = OpenPart(stream="other", wire_id="", part=part)
        return emit(part)

    def _other_part(self, part: Part) -> list[JsonObject]:
        """Parts AG-UI has no event for travel as ``CUSTOM "interlock.part"`` (never dropped)."""
        return self.custom("interlock.part", to_json(part))

    def _part_finished(self, index: int, part: Part) -> list[JsonObject]:
        if index in self._done and index not in self._open:
            return []
        events = self._part_started(index, part) if index not in self._open else []
        open_part = self._open[index]
        final = streamed_text(part)
        if final is not None and final.startswith(open_part.sent):
            events += self._part_delta(index, final[len(open_part.sent) :])
        return events + self._close(index, part)

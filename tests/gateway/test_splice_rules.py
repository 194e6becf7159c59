"""The splice rules are sound per upstream dialect: whenever they admit new messages after
a prefix whose encoding was kept, the prefix's kept items followed by the new messages'
own encoding are exactly the whole history's encoding, byte for byte, with no warning the
whole history would have had. Random canonical histories, with the boundary cases that
made the rules: a tool result of the prefix's call, merged tool turns, Gemini content
marks, reasoning-only steps, reused call ids, names, user turns, leading and late system
messages; for Anthropic, messages that lose every block, wire-role and new-message marks,
signed, redacted and foreign thinking, and manual thinking's leading-block rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from interlock.gateway.dialects import Dialect, dialect
from interlock.gateway.model_field import compact_json
from interlock.gateway.splice_rules import BRIDGE, SPLICES, lead, splices_alone
from interlock.gateway.translation_cache import encode_alone, kept, key_of, spliced_body
from interlock.gateway.vault import Lookup
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    GEMINI_THOUGHT_SIGNATURE,
    OPENAI_ENCRYPTED_CONTENT,
    ApprovalRequestPart,
    Encoded,
    GenerationOptions,
    JsonObject,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    Request,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

NOTHING = Lookup((), (), (), {})
UPSTREAMS: list[tuple[Dialect, ReplayPolicy, str]] = [
    (dialect("openai-chat"), ReplayPolicy(), "m"),
    (dialect("openai-chat", "reasoning_content"), ReplayPolicy(mode="degrade"), "m"),
    (dialect("openai-chat", "gemini-compat"), ReplayPolicy(mode="degrade"), "m"),
    (dialect("openai-responses"), ReplayPolicy(), "m"),
    (dialect("openai-responses"), ReplayPolicy(mode="degrade"), "m"),
    (dialect("gemini"), ReplayPolicy(), "gemini-3-pro"),
    (dialect("gemini"), ReplayPolicy(mode="degrade"), "gemini-2.5-flash"),
    (dialect("gemini"), ReplayPolicy(mode="degrade", signatures_required=True), "g"),
    (dialect("anthropic"), ReplayPolicy(), "claude-x"),
    (dialect("anthropic"), ReplayPolicy(mode="degrade"), "claude-x"),
    (dialect("anthropic"), ReplayPolicy(), "claude-sonnet-4-5-thinking"),
    (dialect("anthropic"), ReplayPolicy(mode="degrade"), "claude-sonnet-4-5-thinking"),
]
THINKING = "-thinking"
"""A model asked for manual thinking (a budget): the open tool loop's assistant turn must
start with a thinking block."""
SIGNATURE = Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="c2ln")
ENCRYPTED = Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="enc")
THOUGHT = Opaque(provider="anthropic", format=ANTHROPIC_THINKING_SIGNATURE, data="sig")
REDACTED = Opaque(provider="anthropic", format=ANTHROPIC_REDACTED_THINKING, data="red")
FOREIGN = Opaque(provider="deepseek", format=ANTHROPIC_THINKING_SIGNATURE, data="ds")
LEAD = st.lists(
    st.sampled_from([("system", "s"), ("system", "t"), ("developer", "d"), ("system", "~")]),
    max_size=2,
)
"""Leading instructions; ``~``: a Responses client's ``instructions`` member."""
REASONING = st.sampled_from([None, None, ENCRYPTED, SIGNATURE, THOUGHT, THOUGHT, REDACTED, FOREIGN])


EVENTS = st.lists(
    st.sampled_from(
        ["step"] * 12
        + ["answer", "user", "system", "thinking", "orphan", "reused", "marked", "named"]
        + ["refusal", "tool_text", "approval", "two_results", "unsigned", "unnamed", "minted"]
        + ["emptied", "emptied_user", "new_message", "in_place", "as_user", "fields", "empty"]
    ),
    min_size=1,
    max_size=5,
)


def _text(role: str, text: str) -> Message:
    return Message(role=role, parts=(TextPart(text=text),))


def _instruction(role: str, text: str) -> Message:
    if text != "~":
        return _text(role, text)
    marks = {"openai-responses": {"~instructions": True}}
    return Message(role=role, parts=(TextPart(text="be brief"),), extra=marks)


def _marked(role: Role, extra: dict[str, JsonObject]) -> Message:
    if role == "tool":
        return Message(role="tool", parts=(_result("m"),), extra=extra)
    return Message(role=role, parts=(TextPart(text="mid"),), extra=extra)


def _result(call_id: str, name: str | None = "f") -> ToolResultPart:
    return ToolResultPart(call_id=call_id, name=name, output=(TextPart(text="r " + call_id),))


class Writer:
    """Canonical messages for a list of events, call ids numbered from ``first``."""

    def __init__(self, first: int, reasoning: Opaque | None, signed: bool) -> None:
        self.number = first
        self.reasoning = reasoning
        self.signed = signed
        self.calls: list[str] = []

    def _step(self, ids: list[str], *, signed: bool = True, **extra: object) -> list[Message]:
        signature = SIGNATURE if signed and self.signed else None
        calls = [
            ToolCallPart(call_id=i, name="f", arguments="{}", signature=signature) for i in ids
        ]
        parts: list[Part] = []
        if self.reasoning is not None:
            kind = "raw" if self.reasoning.format == ANTHROPIC_THINKING_SIGNATURE else "encrypted"
            text = "t" if kind == "raw" else ""
            parts.append(ReasoningPart(reasoning_kind=kind, text=text, opaque=self.reasoning))
        step = Message(role="assistant", parts=(*parts, *calls), **extra)  # type: ignore[arg-type]
        self.calls.extend(ids)
        return [step, *(Message(role="tool", parts=(_result(i),)) for i in ids)]

    def messages(self, events: list[str]) -> tuple[Message, ...]:
        out: list[Message] = []
        for kind in events:
            self.number += 1
            fresh = f"c{self.number}"
            earlier = self.calls[0] if self.calls else fresh
            out.extend(self._event(kind, fresh, earlier))
        return tuple(out)

    def _event(self, event: str, fresh: str, earlier: str) -> list[Message]:
        match event:
            case "step":
                return self._step([fresh])
            case "answer":
                return [_text("assistant", "done")]
            case "user" | "system":
                return [_text(event, "more")]
            case "thinking":
                return [
                    Message(
                        role="assistant", parts=(ReasoningPart(reasoning_kind="raw", text="h"),)
                    ),
                    *self._step([fresh]),
                ]
            case "orphan":
                return [Message(role="tool", parts=(_result(earlier),))]
            case "reused":
                return self._step([earlier])
            case "marked":
                return self._step([fresh], extra={"gemini": {"content": "continue"}})
            case "named":
                return self._step([fresh], name="bot")
            case "refusal":
                return [Message(role="assistant", parts=(RefusalPart(text="no"),))]
            case "tool_text":
                return [*self._step([fresh]), _text("tool", "note")]
            case "approval":
                call = ToolCallPart(call_id="a" + fresh, name="f", arguments="{}")
                request = ApprovalRequestPart(approval_id="ap" + fresh, call=call)
                return [Message(role="assistant", parts=(request,))]
            case "two_results":
                second = fresh + "b"
                step = self._step([fresh, second])
                return [step[0], Message(role="tool", parts=(_result(fresh), _result(second)))]
            case "unsigned":
                return self._step([fresh], signed=False)
            case "emptied":  # encodes to no Anthropic block: the message is left out
                return [Message(role="assistant", parts=(TextPart(text=""),))]
            case "emptied_user":
                return [Message(role="user", parts=(TextPart(text=""),))]
            case "empty":  # no part at all
                return [Message(role="assistant", parts=())]
            case "new_message":  # an Anthropic client sent two wire messages of one role
                marks = {"anthropic": {"newMessage": True}}
                return [*self._step([fresh]), _text("assistant", "more"), _marked("tool", marks)]
            case "in_place":  # an Anthropic client's system message inside messages[]
                return [_marked("system", {"anthropic": {"role": "system"}})]
            case "as_user":  # sent in another wire role than its own
                return [*self._step([fresh]), _marked("tool", {"anthropic": {"role": "user"}})]
            case "fields":  # unknown wire message fields kept
                return self._step([fresh], extra={"anthropic": {"fields": {"x": 1}}})
            case "minted":  # a Gemini client's call without an id: the gateway minted one
                step = self._step([fresh])
                assert isinstance(step[0].parts[-1], ToolCallPart)
                call = replace(step[0].parts[-1], extra={"gemini": {"mintedId": True}})
                return [replace(step[0], parts=(*step[0].parts[:-1], call)), *step[1:]]
            case _:  # unnamed: a result without its function name
                step = self._step([fresh])
                return [step[0], Message(role="tool", parts=(_result(fresh, None),))]


def _encoded(upstream: Dialect, request: Request, policy: ReplayPolicy) -> Encoded | None:
    try:
        return upstream.encode_request(request, policy)
    except LossyHistoryError:
        return None


def _prefix_calls(messages: tuple[Message, ...]) -> frozenset[str]:
    return frozenset(part.call_id for message in messages for part in message.tool_calls)


@settings(
    deadline=None,  # no timing assertions: the machine is shared
    max_examples=300,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
# A system message after a first message that encodes to nothing (a local approval) still
# goes to Gemini's systemInstruction, though it is not among the leading ones.
@example(5, [("system", "s")], None, True, (), ["approval", "system", "step"], ["step"])
# A new call reusing the id of a prefix call the gateway minted: Gemini leaves the id off
# the result after the prefix, not alone.
@example(5, [], None, True, ("go",), ["minted"], ["reused"])
@given(
    st.sampled_from(range(len(UPSTREAMS))),
    LEAD,
    REASONING,
    st.booleans(),
    st.sampled_from([(), ("go",)]),
    EVENTS,
    EVENTS,
)
def test_admitted_new_messages_encode_after_the_prefix_as_alone(
    which: int,
    leading: list[tuple[str, str]],
    reasoning: Opaque | None,
    signed: bool,
    opening: tuple[str, ...],
    before: list[str],
    after: list[str],
) -> None:
    """What :func:`.translation_cache.splice` writes (a kept prefix's items, then the new
    messages encoded alone) is the whole history's encoding, whenever it writes one."""
    _splices_as_whole(which, leading, reasoning, signed, opening, before, after)


def _splices_as_whole(
    which: int,
    leading: list[tuple[str, str]],
    reasoning: Opaque | None,
    signed: bool,
    opening: tuple[str, ...],
    before: list[str],
    after: list[str],
    admit: Callable[[bool], object] = assume,
) -> bool:
    """The property for one history, spliced or not: ``admit`` (``assume``, or an assertion
    outside Hypothesis) is given each condition of the splice."""
    upstream, policy, model = UPSTREAMS[which]
    name = upstream.name
    tools = (ToolSpec(name="f", parameters={"type": "object"}),)
    options = GenerationOptions(thinking_budget=2048 if THINKING in model else None)
    request = Request(model=model, messages=(), tools=tools, options=options)
    writer = Writer(0, reasoning, signed)
    lead_messages = tuple(_instruction(role, text) for role, text in leading)
    prefix = (*lead_messages, *(_text("user", text) for text in opening), *writer.messages(before))
    new = writer.messages(after)
    encoded = _encoded(upstream, replace(request, messages=prefix), policy)
    admit(encoded is not None)
    assert encoded is not None
    key = key_of(request, "up", policy)
    translation = kept(key, name, encoded, prefix, NOTHING, ())
    last = prefix[-1] if prefix else None
    admit(translation is not None and splices_alone(name, new, _prefix_calls(prefix), last))
    assert translation is not None
    alone = encode_alone(upstream, request, policy, prefix, new)
    spliced = spliced_body(translation, name, alone) if alone is not None else None
    admit(spliced is not None)
    assert spliced is not None
    if admit is assume:
        event(f"spliced for {name}")
    whole = upstream.encode_request(replace(request, messages=prefix + new), policy)
    assert whole.warnings == ()
    assert spliced.body == compact_json(whole.payload)
    return True


ANTHROPIC = [index for index, (up, _, _) in enumerate(UPSTREAMS) if up.name == "anthropic"]
ANTHROPIC_EVENTS = st.lists(
    st.sampled_from(
        ["step"] * 8
        + ["answer", "thinking", "two_results", "emptied", "empty", "new_message", "as_user"]
        + ["fields", "reused", "orphan", "tool_text", "in_place", "emptied_user", "user"]
    ),
    min_size=1,
    max_size=5,
)


@settings(
    deadline=None,  # no timing assertions: the machine is shared
    max_examples=300,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
# The prefix ends with a user message that encodes to nothing: its last wire message is the
# assistant's, which a new assistant message would join.
@example(ANTHROPIC[0], [], None, ["step", "emptied_user"], ["step"])
# The first new message encodes to nothing: the tool result after it joins the prefix's
# last user turn (the bridge's item then differs).
@example(ANTHROPIC[0], [], None, ["step"], ["emptied", "step"])
@example(ANTHROPIC[1], [("system", "s")], THOUGHT, ["step", "in_place"], ["new_message"])
@example(ANTHROPIC[2], [], THOUGHT, ["step"], ["step", "answer"])
@example(ANTHROPIC[3], [], None, ["step"], ["step"])
@given(
    st.sampled_from(ANTHROPIC),
    LEAD,
    st.sampled_from([None, THOUGHT, THOUGHT, REDACTED, FOREIGN]),
    ANTHROPIC_EVENTS,
    ANTHROPIC_EVENTS,
)
def test_anthropic_splices_are_the_whole_encoding(
    which: int,
    leading: list[tuple[str, str]],
    reasoning: Opaque | None,
    before: list[str],
    after: list[str],
) -> None:
    """The property above, for Anthropic upstreams only (its rules admit less), with the
    histories that test its bridge: merged and emptied wire messages at the join, marks,
    thinking signed, redacted and another vendor's, manual thinking on and off."""
    _splices_as_whole(which, leading, reasoning, False, ("go",), before, after)


def _must(condition: bool) -> None:
    assert condition


def test_anthropic_splices_a_plain_tool_loop() -> None:
    """Not vacuous: the commonest continuation (a step after a tool result, or after the
    user's question) is spliced for every Anthropic upstream, thinking on or off."""
    for which in ANTHROPIC:
        for before in (["step"], [], ["step", "answer", "user"]):
            assert _splices_as_whole(
                which, [("system", "s")], THOUGHT, False, ("go",), before, ["step"], _must
            )


def test_the_rules_refuse_what_an_encoder_reads_across_messages() -> None:
    call = ToolCallPart(call_id="c", name="f", arguments="{}")
    result = Message(
        role="tool", parts=(ToolResultPart(call_id="c", output=(TextPart(text="r"),)),)
    )
    step = Message(role="assistant", parts=(ReasoningPart(reasoning_kind="raw", text="r"), call))
    user = _text("user", "u")
    for name in SPLICES:
        assert splices_alone(name, (step, result), frozenset(), user)
        assert not splices_alone(name, (), frozenset())
        assert not splices_alone(name, (_text("user", "x"),), frozenset())
        assert not splices_alone(
            name, (Message(role="assistant", parts=(RefusalPart(text="no"),)),), frozenset()
        )
        assert not splices_alone(
            name, (Message(role="assistant", name="b", parts=(call,)),), frozenset()
        )
        approval = ApprovalRequestPart(approval_id="a", call=call)
        assert not splices_alone(name, (Message(role="assistant", parts=(approval,)),), frozenset())
    # Gemini: a result first (it would join the prefix's tool turn), a result of the
    # prefix's call (its name comes from there), a call id the prefix used, marks.
    assert not splices_alone("gemini", (result,), frozenset())
    assert splices_alone("openai-chat", (step, result), frozenset({"c"}))
    assert not splices_alone("gemini", (step, result), frozenset({"c"}))
    marked = Message(role="assistant", parts=(call,), extra={"gemini": {"content": "continue"}})
    assert not splices_alone("gemini", (marked, result), frozenset())
    thinking = Message(role="assistant", parts=(ReasoningPart(reasoning_kind="raw", text="r"),))
    assert not splices_alone("gemini", (thinking, step, result), frozenset())
    assert lead("gemini", (_text("system", "s"), _text("developer", "d"), _text("user", "u"))) == (
        _text("system", "s"),
        _text("developer", "d"),
    )
    assert lead("openai-chat", (_text("system", "s"),)) == ()


def test_anthropic_rules_refuse_a_join_that_is_not_a_user_turn() -> None:
    """The prefix must end with a user turn nothing new merges into; a first new message
    that encodes to nothing lets the next one merge into it (the bridge's item shows it)."""
    call = ToolCallPart(call_id="c", name="f", arguments="{}")
    step = Message(role="assistant", parts=(call,))
    result = Message(role="tool", parts=(_result("c"),))
    user = _text("user", "u")
    assert splices_alone("anthropic", (step, result), frozenset(), user)
    assert splices_alone("anthropic", (step, result), frozenset(), result)
    assert not splices_alone("anthropic", (step, result), frozenset(), None)
    assert not splices_alone("anthropic", (step, result), frozenset(), step)
    assert not splices_alone("anthropic", (step, result), frozenset(), _text("user", ""))
    assert not splices_alone("anthropic", (step, result), frozenset({"c"}), user)
    assert not splices_alone("anthropic", (result,), frozenset(), user)
    as_system = _marked("user", {"anthropic": {"role": "system"}})
    assert not splices_alone("anthropic", (step, result), frozenset(), as_system)
    emptied = Message(role="assistant", parts=(TextPart(text=""),))
    assert splices_alone("anthropic", (emptied, result), frozenset(), user)
    tools = (ToolSpec(name="f", parameters={"type": "object"}),)
    request = Request(model="claude-x", messages=(), tools=tools)
    upstream = dialect("anthropic")
    prefix = (user, step, result)
    fresh = Message(role="assistant", parts=(replace(call, call_id="d"),))
    answer = Message(role="tool", parts=(_result("d"),))
    alone = encode_alone(upstream, request, ReplayPolicy(), prefix, (fresh, answer))
    assert alone is not None
    items = cast(list[JsonObject], alone.payload["messages"])
    assert [item["role"] for item in items] == ["assistant", "user"]
    assert encode_alone(upstream, request, ReplayPolicy(), prefix, (emptied, result)) is None
    assert lead("anthropic", (_text("system", "s"), user)) == (
        _text("system", "s"),
        BRIDGE["anthropic"],
    )

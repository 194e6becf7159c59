"""The splice rules are sound per upstream dialect: whenever they admit new messages after
a prefix whose encoding was kept, the prefix's kept items followed by the new messages'
own encoding are exactly the whole history's encoding, byte for byte, with no warning the
whole history would have had. Random canonical histories, with the boundary cases that
made the rules: a tool result of the prefix's call, merged tool turns, Gemini content
marks, reasoning-only steps, reused call ids, names, user turns, leading and late system
messages."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from interlock.gateway.dialects import Dialect, dialect
from interlock.gateway.model_field import compact_json
from interlock.gateway.splice_rules import SPLICES, lead, splices_alone
from interlock.gateway.translation_cache import encode_alone, kept, key_of, spliced_body
from interlock.gateway.vault import Lookup
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    OPENAI_ENCRYPTED_CONTENT,
    ApprovalRequestPart,
    Encoded,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    Request,
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
]
SIGNATURE = Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="c2ln")
ENCRYPTED = Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="enc")
LEAD = st.lists(
    st.sampled_from([("system", "s"), ("system", "t"), ("developer", "d"), ("system", "~")]),
    max_size=2,
)
"""Leading instructions; ``~``: a Responses client's ``instructions`` member."""
REASONING = st.sampled_from([None, None, ENCRYPTED, SIGNATURE])


EVENTS = st.lists(
    st.sampled_from(
        ["step"] * 12
        + ["answer", "user", "system", "thinking", "orphan", "reused", "marked", "named"]
        + ["refusal", "tool_text", "approval", "two_results", "unsigned", "unnamed", "minted"]
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
            parts.append(ReasoningPart(reasoning_kind="encrypted", opaque=self.reasoning))
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
    upstream, policy, model = UPSTREAMS[which]
    name = upstream.name
    tools = (ToolSpec(name="f", parameters={"type": "object"}),)
    request = Request(model=model, messages=(), tools=tools)
    writer = Writer(0, reasoning, signed)
    lead_messages = tuple(_instruction(role, text) for role, text in leading)
    prefix = (*lead_messages, *(_text("user", text) for text in opening), *writer.messages(before))
    new = writer.messages(after)
    encoded = _encoded(upstream, replace(request, messages=prefix), policy)
    assume(encoded is not None)
    assert encoded is not None
    key = key_of(request, "up", policy)
    translation = kept(key, name, encoded, prefix, NOTHING, ())
    assume(translation is not None and splices_alone(name, new, _prefix_calls(prefix)))
    assert translation is not None
    alone = encode_alone(upstream, request, policy, prefix, new)
    spliced = spliced_body(translation, name, alone) if alone is not None else None
    assume(spliced is not None)
    assert spliced is not None
    event(f"spliced for {name}")
    whole = upstream.encode_request(replace(request, messages=prefix + new), policy)
    assert whole.warnings == ()
    assert spliced.body == compact_json(whole.payload)


def test_the_rules_refuse_what_an_encoder_reads_across_messages() -> None:
    call = ToolCallPart(call_id="c", name="f", arguments="{}")
    result = Message(
        role="tool", parts=(ToolResultPart(call_id="c", output=(TextPart(text="r"),)),)
    )
    step = Message(role="assistant", parts=(ReasoningPart(reasoning_kind="raw", text="r"), call))
    for name in SPLICES:
        assert splices_alone(name, (step, result), frozenset())
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

"""Item comparison: a Chat stream's one text channel joins a message's text parts."""

from __future__ import annotations

from interlock.conformance._codecs import PROVIDER_TARGETS
from interlock.conformance._compare import compare_items, joined_texts
from interlock.conformance._features import Item, response_items
from interlock.transcript import HostedToolPart, Message, Response, TextPart

CHAT = PROVIDER_TARGETS["openai_chat"][0]


def _response(*texts: str) -> Response:
    code = HostedToolPart(provider="google", item_type="executableCode", item={"code": "1"})
    parts = (TextPart(text=texts[0]), code, *(TextPart(text=t) for t in texts[1:]))
    return Response(message=Message(role="assistant", parts=parts))


def _outcomes(source: Response, streamed: Response) -> list[tuple[str, str | None]]:
    expected = joined_texts(
        [i for i in response_items(source) if i.feature in ("text", "hosted_tool")]
    )
    back = [i for i in response_items(streamed) if i.feature == "text"]
    results = compare_items([i for i in expected if i.feature == "text"], back, [], CHAT)
    return [(r.item.location, r.failure) for r in results]


def test_every_chat_target_has_one_text_channel_and_no_other_target_does() -> None:
    for name, targets in PROVIDER_TARGETS.items():
        assert {t.one_text_stream for t in targets} == {name == "openai_chat"}


def test_the_texts_joined_in_order_are_translated() -> None:
    source = _response("Let me run it. ", "The sum is 5117.")
    streamed = Response(
        message=Message(role="assistant", parts=(TextPart(text="Let me run it. The sum is 5117."),))
    )
    assert _outcomes(source, streamed) == [("message.parts[0]", None)]


def test_a_text_part_missing_from_the_stream_is_still_lost() -> None:
    source = _response("Let me run it. ", "The sum is 5117.")
    streamed = Response(
        message=Message(role="assistant", parts=(TextPart(text="Let me run it. "),))
    )
    assert _outcomes(source, streamed) == [("message.parts[0]", "lost")]


def test_texts_in_another_order_are_lost() -> None:
    source = _response("A", "B")
    streamed = Response(message=Message(role="assistant", parts=(TextPart(text="BA"),)))
    assert _outcomes(source, streamed) == [("message.parts[0]", "lost")]


def test_one_text_is_left_as_it_is() -> None:
    items = [Item("text", "message.parts[0]", ("text", "assistant", "x"))]
    assert joined_texts(items) == items

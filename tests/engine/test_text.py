"""`engine.text`: surrogate pairs joined, lone halves replaced, deltas joined incrementally."""

from __future__ import annotations

from engine.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from engine.stop import StopInfo, StopReason
from engine.text import TextJoiner, clean, clean_data


def test_clean() -> None:
    assert clean("plain ascii") == "plain ascii"
    assert clean("中文 and é") == "中文 and é"
    assert clean("\ud83d\ude00") == "\U0001f600"  # a pair as two code points: joined
    assert clean("a\ud800b\udc00c") == "a\ufffdb\ufffdc"  # lone halves
    assert clean("\ude00\ud83d") == "\ufffd\ufffd"  # low before high is no pair
    assert clean("中\ud83d") == "中\ufffd"
    assert clean_data({"k\ud800": ["\ud83d\ude00", 1, None]}) == {
        "k\ufffd": ["\U0001f600", 1, None]
    }


def test_joiner_holds_a_high_half_until_the_next_delta() -> None:
    joiner = TextJoiner()
    assert joiner.feed("Hi \ud83d") == "Hi "
    assert joiner.pending
    assert joiner.feed("\ude00!") == "\U0001f600!"
    assert joiner.feed("\ud83d") == ""
    assert joiner.feed("") == ""  # an empty delta decides nothing
    assert joiner.feed("x") == "\ufffdx"  # no low half followed
    assert joiner.feed("\ude00") == "\ufffd"  # a low half with nothing before it
    assert joiner.feed("end \ud800") == "end "
    assert joiner.flush() == "\ufffd"
    assert joiner.flush() == "" and not joiner.pending


def test_every_text_is_clean_where_it_is_built() -> None:
    message = AssistantMessage(
        content="a\ud83d\ude00",
        reasoning="\ud800",
        tool_calls=[ToolCall("c\udc00", "n\udc00", {"q": "\ud83d"})],
        provider_data={"sig": "\udfff"},
    )
    assert (message.content, message.reasoning) == ("a\U0001f600", "\ufffd")
    assert message.tool_calls[0] == ToolCall("c\ufffd", "n\ufffd", {"q": "\ufffd"})
    assert message.provider_data == {"sig": "\ufffd"}
    assert UserMessage(content="\ud800").content == "\ufffd"
    assert ToolMessage(tool_call_id="c", name="\ud800", content="\udc00").content == "\ufffd"
    stop = StopInfo(StopReason.OTHER, raw="\ud800", message="\ud800", details={"x": "\ud800"})
    assert (stop.raw, stop.message, stop.details) == ("\ufffd", "\ufffd", {"x": "\ufffd"})

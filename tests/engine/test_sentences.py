"""Sentences for people come from one catalog, in English and Simplified Chinese.

Every resume description, error sentence and stop description is pinned here word for word
in both languages (literal strings, not the catalog's own constants), and so are the notices
the model reads, which stay in the seed's English whatever language the host speaks.
"""

from __future__ import annotations

import re
import string

import pytest

from engine import (
    AgentBusyError,
    AgentResumeError,
    AgentRunConfig,
    AssistantMessage,
    ErrorAction,
    InternalMessage,
    StepLimitError,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    describe_stop,
)
from engine.errors import CorruptDatabaseError, NewerSchemaError
from engine.sentences import keys, language_of, sentence
from tests.support.scripted import ScriptedModel, Turn


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_sentence_has_both_languages_with_the_same_parameters() -> None:
    from engine.sentences import _SENTENCES

    for key in keys():
        english, chinese = _SENTENCES[key]
        assert english.strip() and chinese.strip(), key
        assert _fields(english) == _fields(chinese), key
        assert re.search("[\u4e00-\u9fff]", chinese), f"{key}: not Chinese"


def test_no_sentence_names_a_part_of_a_host() -> None:
    """Host words ("Settings", "window", "Resume button") are the host's to choose."""
    from engine.sentences import _SENTENCES

    for key in keys():
        english, chinese = _SENTENCES[key]
        plain = english.replace("context window", "")
        assert not re.search(r"Settings|window|button|\bResume\b|\bclick", plain), key
        assert not re.search("设置|窗口|按钮|点击", chinese.replace("上下文窗口", "")), key


def test_language_tags() -> None:
    for tag in ("zh_CN", "zh-CN", "zh", "zh_Hans_CN", "zh-SG", "ZH_cn"):
        assert language_of(tag) == "zh_CN", tag
    for tag in ("en", "en_US", "", None, "fr_FR", "zh_TW"):
        assert language_of(tag) == "en", tag


# ---------------------------------------------------------------------------- descriptions

CALLS = (ToolCall("a", "write_file", {}), ToolCall("b", "send_mail", {}))
Q = UserMessage(content="Q")


def _stopped(reason: StopReason, raw: str | None = None) -> AssistantMessage:
    return AssistantMessage(content="part", stop=StopInfo(reason, raw=raw))


DESCRIPTIONS = {
    "user last": (
        [Q],
        "The model never answered the last message; resuming will ask it again.",
        "模型还没有回答最后一条消息；继续将再次询问它。",
    ),
    "results all present": (
        [Q, AssistantMessage(tool_calls=CALLS[:1]), ToolMessage(tool_call_id="a", content="ok")],
        "The tools finished but the model has not seen their results yet; resuming will send "
        "them to the model.",
        "工具已经运行完毕，但模型还没有看到结果；继续将把结果发给模型。",
    ),
    "one tool cut": (
        [Q, AssistantMessage(tool_calls=CALLS[:1])],
        "The app stopped while the tool write_file ran; resuming will tell the model it may "
        "or may not have finished, without running it again.",
        "工具 write_file 运行时程序停止了；继续将告诉模型它可能已完成也可能没有，不会再次运行它。",
    ),
    "two tools cut": (
        [Q, AssistantMessage(tool_calls=CALLS)],
        "The app stopped while the tools write_file, send_mail ran; resuming will tell the "
        "model they may or may not have finished, without running them again.",
        "工具 write_file, send_mail 运行时程序停止了；继续将告诉模型它们可能已完成也可能没有，不会再次运行它们。",
    ),
    "stopped": (
        [Q, _stopped(StopReason.INTERRUPTED, "cancelled")],
        "The answer was stopped before it finished; resuming will ask the model to write it "
        "again from the start.",
        "回答在完成前被停止了；继续将请模型从头重写这个回答。",
    ),
    "connection broke": (
        [Q, _stopped(StopReason.INTERRUPTED, "network_error")],
        "The connection broke before the answer finished; resuming will ask the model to "
        "write it again from the start.",
        "回答完成前连接断开了；继续将请模型从头重写这个回答。",
    ),
    "app stopped": (
        [Q, _stopped(StopReason.INTERRUPTED, "app_stopped")],
        "The app stopped before the answer finished; resuming will ask the model to write it "
        "again from the start.",
        "回答完成前程序停止了；继续将请模型从头重写这个回答。",
    ),
    "provider error": (
        [Q, _stopped(StopReason.INTERRUPTED, "provider_error")],
        "The answer was cut off by an error; resuming will ask the model to write it again "
        "from the start.",
        "回答被一个错误打断了；继续将请模型从头重写这个回答。",
    ),
    "output limit": (
        [Q, _stopped(StopReason.MAX_OUTPUT, "length")],
        "The answer reached the output limit; resuming will ask the model to continue where it "
        "stopped.",
        "回答达到了输出上限；继续将请模型从停下的地方接着写。",
    ),
    "paused": (
        [Q, _stopped(StopReason.PAUSED, "pause_turn")],
        "The provider paused this answer; resuming will let the model carry on.",
        "服务商暂停了这个回答；继续将让模型接着回答。",
    ),
}


@pytest.mark.parametrize("case", sorted(DESCRIPTIONS))
async def test_every_description_in_both_languages(store, case: str) -> None:
    history, english, chinese = DESCRIPTIONS[case]
    await store.seed("s", history)
    agent = await store.agent(None)
    assert (await agent.resume_point()).description == english
    assert (await agent.resume_point(config=AgentRunConfig("s", language="zh_CN"))).description == (
        chinese
    )
    zh_agent = await store.agent(None, language="zh_CN")
    assert (await zh_agent.resume_point()).description == chinese


# ---------------------------------------------------------------------------- errors

RESUME_ERRORS = {
    "empty": (
        "This conversation has no messages, so there is nothing to resume.",
        "这个对话还没有消息，没有可以继续的内容。",
    ),
    "completed": (
        "The last answer finished normally, so there is nothing to resume.",
        "最后一个回答已正常完成，没有可以继续的内容。",
    ),
    "refused": (
        "The model declined the last request; resuming would be declined again.",
        "模型拒绝了最后的请求；继续也会再次被拒绝。",
    ),
    "context_full": (
        "The conversation filled the model's context window; start a new conversation or "
        "shorten this one before going on.",
        "对话已占满模型的上下文窗口；请开始新对话，或缩短这个对话后再继续。",
    ),
    "unknown_stop": (
        "The last answer stopped for a reason this version does not know.",
        "最后一个回答因这个版本不认识的原因而停止。",
    ),
    "malformed": (
        "The conversation ends in a tool result that answers no tool call, so it cannot be "
        "resumed.",
        "对话以一个不对应任何工具调用的工具结果结尾，因此无法继续。",
    ),
    "odd": ("Cannot resume: odd.", "无法继续：odd。"),
}


@pytest.mark.parametrize("reason", sorted(RESUME_ERRORS))
def test_resume_errors_in_both_languages(reason: str) -> None:
    english, chinese = RESUME_ERRORS[reason]
    error = AgentResumeError(reason)
    assert str(error) == english == error.sentence("en")
    assert error.sentence("zh_CN") == chinese
    wanted = ErrorAction.NEW_CONVERSATION if reason == "context_full" else ErrorAction.NONE
    assert error.action is wanted


def test_agent_and_storage_errors_in_both_languages() -> None:
    limit = StepLimitError(3)
    assert str(limit) == (
        "The request used all 3 model steps without a final answer; everything so far is "
        "saved, and resuming carries on from here."
    )
    assert limit.sentence("zh_CN") == (
        "这个请求用完了全部 3 次模型调用仍没有最终回答；目前的内容都已保存，继续将从这里接着进行。"
    )
    assert limit.action is ErrorAction.RESUME
    busy = AgentBusyError("s1", "pid 42 on host")
    assert str(busy) == (
        "The conversation 's1' is busy in another request (pid 42 on host); wait for it to finish."
    )
    assert busy.sentence("zh_CN") == "对话 's1' 正被另一个请求使用（pid 42 on host）；请等它结束。"
    assert busy.action is ErrorAction.CLOSE_OTHER
    newer = NewerSchemaError("/d/c.sqlite3", 9, 4)
    assert newer.sentence("zh_CN") == (
        "对话文件 /d/c.sqlite3 由更新版本的 Continuo 写入（结构版本 9，本版本最多读取 4）。"
        "文件没有被改动；请更新 Continuo 后再打开。"
    )
    assert newer.action is ErrorAction.UPDATE_APP
    corrupt = CorruptDatabaseError("/d/c.sqlite3")
    assert str(corrupt) == (
        "The conversation file /d/c.sqlite3 is damaged or is not a Continuo database. It was "
        "not changed; restore it from a backup or move it aside to start afresh."
    )
    assert corrupt.action is ErrorAction.RESTORE_BACKUP


# ---------------------------------------------------------------------------- stops

STOPS = [
    (StopInfo(StopReason.INTERRUPTED, raw="cancelled"), "你在回答完成前停止了它。"),
    (StopInfo(StopReason.INTERRUPTED, raw="network_error"), "回答完成前，与服务商的连接断开了。"),
    (StopInfo(StopReason.INTERRUPTED, raw="app_stopped"), "回答完成前程序停止了。"),
    (StopInfo(StopReason.INTERRUPTED, raw="provider_error"), "服务商在回答中途报告了一个错误。"),
    (StopInfo(StopReason.MAX_OUTPUT, raw="length"), "回答达到了输出上限；继续会接着写下去。"),
    (StopInfo(StopReason.REFUSAL), "模型拒绝回答。"),
    (
        StopInfo(StopReason.CONTEXT_FULL),
        "对话已超出模型的上下文窗口；请开始新对话，或缩短这个对话。",
    ),
    (StopInfo(StopReason.PAUSED), "服务商在这一轮完成前暂停了它。"),
    (StopInfo("weird_stop"), "模型因这个版本不认识的原因而停止（weird_stop）。"),
]


@pytest.mark.parametrize(("stop", "chinese"), STOPS)
def test_stops_are_described_in_chinese(stop: StopInfo, chinese: str) -> None:
    assert describe_stop(stop, "zh_CN") == chinese


def test_english_stop_description_keeps_the_stored_words() -> None:
    stop = StopInfo(StopReason.INTERRUPTED, raw="provider_error", message="Overloaded (529).")
    assert describe_stop(stop, "en") == "Overloaded (529)."
    assert describe_stop(StopInfo(StopReason.MAX_OUTPUT), "en") == (
        "The answer reached the output limit; resuming continues it."
    )
    assert sentence("stop.cancelled") == "You stopped this answer before it finished."


# ---------------------------------------------------------------------------- the model's words


async def test_notices_to_the_model_keep_the_seeds_english_in_any_language(store) -> None:
    """What resuming sends to the model is read by the model: never translated."""
    cut = AssistantMessage(content="Half", stop=StopInfo(StopReason.INTERRUPTED, raw="cancelled"))
    await store.seed("s", [Q, cut])
    model = ScriptedModel([Turn(text="Whole.")])
    agent = await store.agent(model, language="zh_CN")
    await agent.resume()
    notice = model.requests[0].messages[-1]
    assert isinstance(notice, InternalMessage)
    assert notice.content == (
        "Your previous response was cut off before it was complete, so the user did not "
        "receive all of it. Redo that response from the start."
    )
    await store.seed("t", [Q, AssistantMessage(tool_calls=CALLS[:1])], started=["a"])
    model = ScriptedModel([Turn(text="Told.")])
    agent = await store.agent(model, session_id="t", language="zh_CN")
    await agent.resume()
    answered = model.requests[0].messages[-1]
    assert isinstance(answered, ToolMessage)
    assert answered.content == (  # the seed's exact words
        "The process stopped while this tool was running, so it may or may not have "
        "completed, and whatever it changes may or may not have happened. Check the current "
        "state before running it again."
    )


# ------------------------------------------------------------- tools that never started

#: Histories whose calls were asked for after the file began recording tool starts (built in
#: the test, after the file exists): (started ids, English, Chinese).
NOT_STARTED_DESCRIPTIONS = {
    "one tool never started": (
        (CALLS[0],),
        [],
        "The app stopped before the tool write_file started, so it did not run; resuming "
        "will tell the model so.",
        "工具 write_file 开始运行前程序停止了，所以它没有运行；继续将如实告诉模型。",
    ),
    "two tools never started": (
        CALLS,
        [],
        "The app stopped before the tools write_file, send_mail started, so they did not "
        "run; resuming will tell the model so.",
        "工具 write_file, send_mail 开始运行前程序停止了，所以它们没有运行；继续将如实告诉模型。",
    ),
    "one ran, one never started": (
        CALLS,
        ["a"],
        "The app stopped while tools ran: write_file may or may not have finished, and "
        "send_mail did not run; resuming will tell the model so, without running any tool "
        "again.",
        "工具运行时程序停止了：write_file 可能已完成也可能没有，send_mail 没有运行；继续将如实"
        "告诉模型，不会再次运行任何工具。",
    ),
    "both started": (
        CALLS,
        ["a", "b"],
        "The app stopped while the tools write_file, send_mail ran; resuming will tell the "
        "model they may or may not have finished, without running them again.",
        "工具 write_file, send_mail 运行时程序停止了；继续将告诉模型它们可能已完成也可能没有，不会再次运行它们。",
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_STARTED_DESCRIPTIONS))
async def test_descriptions_say_which_tools_did_not_run(store, case: str) -> None:
    calls, started, english, chinese = NOT_STARTED_DESCRIPTIONS[case]
    await store.seed("first", [Q])  # the file exists (and records starts) from here on
    await store.seed("s", [Q, AssistantMessage(tool_calls=calls)], started=started)
    point = await (await store.agent(None)).resume_point()
    assert point.description == english
    assert [c.id for c in point.not_started] == [c.id for c in calls if c.id not in started]
    assert (await (await store.agent(None, language="zh_CN")).resume_point()).description == (
        chinese
    )


async def test_the_not_started_notice_keeps_its_english_in_any_language(store) -> None:
    await store.seed("first", [Q])
    await store.seed("s", [Q, AssistantMessage(tool_calls=CALLS[:1])])
    model = ScriptedModel([Turn(text="Told.")])
    await (await store.agent(model, language="zh_CN")).resume()
    answered = model.requests[0].messages[-1]
    assert isinstance(answered, ToolMessage) and answered.outcome.value == "not_run"
    assert answered.content == "The tool did not run: the app stopped before it started."

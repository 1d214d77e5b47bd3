"""Which unanswered calls resume says did not run, fast: the start records decide, call by call.

A call with a start record may have run ("may or may not have completed"); one without, in a
file that records starts since before the call was asked, never started ("did not run"); when
the store cannot tell (no reader, or the call is older than the records), every unanswered
call may have run. First `find_resume_point` itself, over a list of records; then the same
through a real SQLite file reopened as after a restart, down to what the model reads.

Treating every unanswered call as never started was caught only by the SIGKILL tests
(issue 18); each case here fails on it within milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engine import (
    AssistantMessage,
    InMemoryHistory,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from engine.extensions import StoredMessage
from engine.resume import ResumeKind, find_resume_point
from tests.support.scripted import ScriptedModel, Turn

# What the model reads, pinned word for word (not imported from the code under test).
MAY_HAVE_RUN = (
    "The process stopped while this tool was running, so it may or may not have completed, "
    "and whatever it changes may or may not have happened. Check the current state before "
    "running it again."
)
DID_NOT_RUN = "The tool did not run: the app stopped before it started."

A, B, C = (ToolCall(i, f"tool_{i}", {}) for i in "abc")
ASKER = AssistantMessage(tool_calls=(A, B, C))
HISTORY = [UserMessage(content="Do three things"), ASKER]


def reader(messages: Sequence[object]):
    records = [StoredMessage(seq, "r", m) for seq, m in enumerate(messages, start=1)]

    async def read(limit: int, before: int | None) -> list[StoredMessage]:
        older = [r for r in records if before is None or r.seq < before]
        return older[-limit:]

    return read


def starts(ids: set[str] | None):
    async def read(asker: AssistantMessage) -> set[str] | None:
        assert asker is ASKER
        return ids

    return read


def outcomes(results: Sequence[ToolMessage]) -> list[tuple[str, str, ToolOutcome]]:
    return [(r.tool_call_id, r.content, r.outcome) for r in results]


@pytest.mark.parametrize(
    ("started", "never"),
    [
        (set(), "abc"),
        ({"a"}, "bc"),
        ({"b"}, "ac"),
        ({"a", "b", "c"}, ""),
        (None, ""),  # the store cannot tell: every call may have run
    ],
)
async def test_only_the_calls_without_a_start_record_did_not_run(
    started: set[str] | None, never: str
) -> None:
    point = await find_resume_point(reader(HISTORY), read_starts=starts(started))
    assert point.kind is ResumeKind.RECOVER_TOOLS
    assert [c.id for c in point.unanswered_tool_calls] == ["a", "b", "c"]
    assert [c.id for c in point.not_started] == list(never)
    assert outcomes(point.recovery_results()) == [
        (i, DID_NOT_RUN, ToolOutcome.NOT_RUN)
        if i in never
        else (i, MAY_HAVE_RUN, ToolOutcome.INTERRUPTED)
        for i in "abc"
    ]


async def test_without_a_start_reader_every_unanswered_call_may_have_run() -> None:
    answered = ToolMessage(tool_call_id="a", name="tool_a", content="done")
    point = await find_resume_point(reader([*HISTORY, answered]))
    assert [c.id for c in point.unanswered_tool_calls] == ["b", "c"]
    assert point.not_started == ()
    assert outcomes(point.recovery_results()) == [
        ("b", MAY_HAVE_RUN, ToolOutcome.INTERRUPTED),
        ("c", MAY_HAVE_RUN, ToolOutcome.INTERRUPTED),
    ]


# ---------------------------------------------------------------------------- after a restart


async def resumed(store, started: Sequence[str], *, recorded_first: bool = True):
    """Seed the history with ``started`` start records, reopen, resume; the point and what
    the model read for each call."""
    if recorded_first:  # the file records starts from before the calls were asked
        await store.seed("first", [UserMessage(content="Hello")])
    calls = AssistantMessage(tool_calls=(A, B, C))
    await store.seed("s", [UserMessage(content="Do three things"), calls], started=started)
    point = await (await store.agent(None)).resume_point()
    model = ScriptedModel([Turn(text="Noted.")])
    await (await store.agent(model)).resume()
    told = [m for m in model.requests[0].messages if isinstance(m, ToolMessage)]
    return point, outcomes(told)


async def test_after_a_restart_the_start_records_decide_what_the_model_reads(store) -> None:
    point, told = await resumed(store, ["b"])
    assert [c.id for c in point.not_started] == ["a", "c"]
    assert "did not run" in point.description and "may or may not" in point.description
    assert told == [
        ("a", DID_NOT_RUN, ToolOutcome.NOT_RUN),
        ("b", MAY_HAVE_RUN, ToolOutcome.INTERRUPTED),
        ("c", DID_NOT_RUN, ToolOutcome.NOT_RUN),
    ]


async def test_after_a_restart_every_started_call_may_have_run(store) -> None:
    point, told = await resumed(store, ["a", "b", "c"])
    assert point.not_started == ()
    assert [o for _, _, o in told] == [ToolOutcome.INTERRUPTED] * 3


async def test_calls_older_than_the_start_records_may_all_have_run(store) -> None:
    # Asked before this file recorded starts (an older version wrote them): no record says
    # nothing, so none may be said not to have run.
    point, told = await resumed(store, [], recorded_first=False)
    assert point.not_started == ()
    assert [o for _, _, o in told] == [ToolOutcome.INTERRUPTED] * 3


async def test_a_store_that_records_no_starts_never_says_did_not_run() -> None:
    from engine import Agent, AgentRunConfig, RunContext

    history = InMemoryHistory()
    for message in HISTORY:
        await history.append(RunContext("s", "r", None), message)
    point = await Agent(None, AgentRunConfig("s"), extensions=[history]).resume_point()
    assert point is not None and point.not_started == ()

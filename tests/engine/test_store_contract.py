"""The store contract (`engine.store.SessionStore`), run against every store the engine has:
a real SQLite file (`SQLiteSessionExtension`) and the in-memory default (`InMemoryHistory`).

Each test says what every store promises; where the two differ by design (the in-memory store
keeps no drafts and no tool-start records, since nothing outlives the process to read them),
the test says what each promises through `Kind`. The operations that take the lease outside
a request (`switch_version`, `settle_draft`) are checked against both too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine import (
    ROOT,
    AgentBusyError,
    AssistantMessage,
    Blob,
    ImagePart,
    InMemoryHistory,
    Message,
    MessageNotFoundError,
    RunContext,
    SessionStore,
    SQLiteSessionExtension,
    StopReason,
    StorageError,
    ToolCall,
    UserMessage,
    settle_draft,
    switch_version,
)
from engine.drafts import app_stopped_stop
from engine.store import BlobStore


@dataclass
class Kind:
    """A store under test and what it promises beyond the common contract."""

    store: SessionStore
    keeps_drafts: bool
    records_tool_starts: bool


@pytest.fixture(params=["sqlite", "memory"])
async def kind(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Kind]:
    if request.param == "sqlite":
        ext = SQLiteSessionExtension(tmp_path / "continuo.sqlite3")
        try:
            yield Kind(ext, keeps_drafts=True, records_tool_starts=True)
        finally:
            await ext.close()
    else:
        yield Kind(InMemoryHistory(), keeps_drafts=False, records_tool_starts=False)


def ctx(request_id: str = "r", session_id: str = "s") -> RunContext:
    return RunContext(session_id, request_id, None)


def user(text: str) -> UserMessage:
    return UserMessage(id=text, content=text)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(id=text, content=text)


def ids(messages: list[Message] | tuple[Message, ...]) -> list[str]:
    return [m.id for m in messages]


async def path(store: SessionStore, session_id: str = "s") -> list[str]:
    return ids(list(await store.restore(ctx(session_id=session_id))))


# ---------------------------------------------------------------------------- history


async def test_append_and_restore_keep_order_per_session(kind: Kind) -> None:
    store = kind.store
    assert await path(store) == []
    for text in ("q1", "a1", "q2"):
        await store.append(ctx(), user(text))
    await store.append(ctx(session_id="other"), user("elsewhere"))
    assert await path(store) == ["q1", "a1", "q2"]
    assert await path(store, "other") == ["elsewhere"]


async def test_restore_tail_reads_the_last_records_oldest_first(kind: Kind) -> None:
    store = kind.store
    for n in range(1, 6):
        await store.append(ctx(f"r{n}"), user(f"m{n}"))
    tail = list(await store.restore_tail(ctx(), 2))
    assert [r.message.id for r in tail] == ["m4", "m5"]
    assert [r.seq for r in tail] == [4, 5]
    assert [r.request_id for r in tail] == ["r4", "r5"]
    # Paging back: the records above a seq.
    above = list(await store.restore_tail(ctx(), 2, tail[0].seq))
    assert [r.message.id for r in above] == ["m2", "m3"]
    assert [r.message.id for r in await store.restore_tail(ctx(), 10, 2)] == ["m1"]
    assert list(await store.restore_tail(ctx(), 10, 1)) == []
    assert [r.message.id for r in await store.restore_tail(ctx(), 99)] == [
        f"m{n}" for n in range(1, 6)
    ]
    assert list(await store.restore_tail(ctx(), 0)) == []
    assert list(await store.restore_tail(ctx(session_id="empty"), 5)) == []


async def test_append_many_puts_a_batch_one_under_the_other(kind: Kind) -> None:
    store = kind.store
    await store.append(ctx(), user("q"))
    await store.append_many(ctx(), [answer("a"), answer("b"), answer("c")])
    assert await path(store) == ["q", "a", "b", "c"]
    assert await store.parent_of(ctx(), "a") == ("q", "assistant")
    assert await store.parent_of(ctx(), "c") == ("b", "assistant")
    await store.append_many(ctx(), [])
    assert await path(store) == ["q", "a", "b", "c"]


async def test_nothing_comes_between_a_batch(kind: Kind) -> None:
    store = kind.store
    await store.append(ctx(), user("q"))
    batch = [answer(f"b{n}") for n in range(20)]
    singles = [store.append(ctx(f"s{n}"), user(f"s{n}")) for n in range(5)]
    await asyncio.gather(*singles[:2], store.append_many(ctx(), batch), *singles[2:])
    stored = await path(store)
    first = stored.index("b0")
    assert stored[first : first + 20] == ids(batch)
    assert sorted(stored) == sorted(["q", *ids(batch), *(f"s{n}" for n in range(5))])


async def test_a_cancelled_batch_is_stored_whole_or_not_at_all(kind: Kind) -> None:
    store = kind.store
    await store.append(ctx(), user("q"))
    batch = [answer(f"b{n}") for n in range(50)]
    writing = asyncio.ensure_future(store.append_many(ctx(), batch))
    await asyncio.sleep(0)  # one turn: the write has begun (not a timing wait)
    writing.cancel()  # in memory the batch is already whole: nothing is left to cancel
    await asyncio.wait({writing})
    stored = await path(store)
    assert stored in (["q"], ["q", *ids(batch)])
    if not writing.cancelled():
        assert stored == ["q", *ids(batch)]


# ---------------------------------------------------------------------------- the tree


async def test_parent_places_a_new_version_and_moves_the_path(kind: Kind) -> None:
    store = kind.store
    for message in (user("q1"), answer("a1"), user("q2"), answer("a2")):
        await store.append(ctx(), message)
    # A new version of q2: beside it, under a1; it becomes the active leaf.
    await store.append(ctx(), user("q2-edit"), parent="a1")
    assert await path(store) == ["q1", "a1", "q2-edit"]
    assert await store.parent_of(ctx(), "q2-edit") == ("a1", "user")
    # A new version of the first question: a new root.
    await store.append(ctx(), user("q1-edit"), parent=ROOT)
    assert await path(store) == ["q1-edit"]
    assert await store.parent_of(ctx(), "q1-edit") == (None, "user")
    # The paths to any message, and to ROOT.
    assert ids(list(await store.restore(ctx(), leaf="a2"))) == ["q1", "a1", "q2", "a2"]
    assert list(await store.restore(ctx(), leaf=ROOT)) == []
    # Appends carry on under the active leaf.
    await store.append(ctx(), answer("a1-edit"))
    assert await path(store) == ["q1-edit", "a1-edit"]


async def test_an_unknown_parent_is_refused_and_nothing_is_stored(kind: Kind) -> None:
    store = kind.store
    await store.append(ctx(), user("q"))
    with pytest.raises(MessageNotFoundError):
        await store.append(ctx(), answer("a"), parent="nope")
    assert await path(store) == ["q"]
    assert [r.message.id for r in await store.restore_tail(ctx(), 10)] == ["q"]


async def test_switch_to_takes_the_newest_leaf_under_a_message(kind: Kind) -> None:
    store = kind.store
    for message in (user("q"), answer("a"), user("q2"), answer("a2")):
        await store.append(ctx(), message)
    await store.append(ctx(), answer("a-v2"), parent="q")
    await store.append(ctx(), user("q2-v2"))
    assert await path(store) == ["q", "a-v2", "q2-v2"]
    assert await store.switch_to(ctx(), "a") == "a2"
    assert await path(store) == ["q", "a", "q2", "a2"]
    assert await store.switch_to(ctx(), "q") == "q2-v2", "the newest leaf of every branch"
    assert await store.switch_to(ctx(), "a-v2") == "q2-v2"
    with pytest.raises(MessageNotFoundError):
        await store.switch_to(ctx(), "nope")
    assert await path(store) == ["q", "a-v2", "q2-v2"]


async def test_branch_only_moves_the_active_leaf(kind: Kind) -> None:
    store = kind.store
    for message in (user("q"), answer("a"), user("q2")):
        await store.append(ctx(), message)
    await store.branch(ctx(), "a")
    assert await path(store) == ["q", "a"]
    await store.append(ctx(), user("q2-v2"))
    assert await path(store) == ["q", "a", "q2-v2"]
    assert await store.parent_of(ctx(), "q2-v2") == ("a", "user")
    await store.branch(ctx(), None)
    assert await path(store) == []
    with pytest.raises(MessageNotFoundError):
        await store.branch(ctx(), "nope")
    with pytest.raises(MessageNotFoundError):
        await store.parent_of(ctx(), "nope")
    assert ids(list(await store.restore(ctx(), leaf="q2"))) == ["q", "a", "q2"]


# ---------------------------------------------------------------------------- leases


async def test_a_lease_refuses_a_second_request_until_released(kind: Kind) -> None:
    store = kind.store
    first, second = ctx("first"), ctx("second")
    await store.acquire(first)
    with pytest.raises(AgentBusyError):
        await store.acquire(second)
    await store.acquire(ctx("elsewhere", session_id="other"))  # another session is free
    await store.release(second)  # it holds nothing: nothing happens
    with pytest.raises(AgentBusyError):
        await store.acquire(second)
    await store.release(first)
    await store.acquire(second)
    await store.release(second)
    await store.release(ctx("elsewhere", session_id="other"))


# ---------------------------------------------------------------------------- drafts


async def test_a_draft_is_kept_as_each_store_promises(kind: Kind) -> None:
    store = kind.store
    writer = ctx("writer")
    await store.acquire(writer)
    await store.append(writer, user("q"))
    shown = AssistantMessage(id="draft", content="half an answ", stop=app_stopped_stop())
    await store.save_draft(writer, shown)
    # The writer holds the lease: its draft is its own business, not a reader's.
    assert await store.restore_draft(ctx("reader")) is None
    await store.release(writer)  # as a dead process's lease would be taken over
    draft = await store.restore_draft(ctx("reader"))
    if not kind.keeps_drafts:
        assert draft is None
        await store.acquire(ctx("next"))
        assert await path(store) == ["q"]
        return
    assert draft is not None
    assert draft.seq == 2 and draft.message.content == "half an answ"
    assert [r.message.id for r in await store.restore_tail(ctx(), 10, draft.seq)] == ["q"]
    # The next lease turns it into the message it was.
    await store.acquire(ctx("next"))
    history = list(await store.restore(ctx()))
    assert ids(history) == ["q", "draft"]
    settled = history[-1]
    assert isinstance(settled, AssistantMessage) and settled.stop is not None
    assert settled.stop.reason is StopReason.INTERRUPTED and settled.stop.raw == "app_stopped"
    assert await store.restore_draft(ctx("reader")) is None
    await store.release(ctx("next"))


async def test_a_draft_settles_under_its_parent(kind: Kind) -> None:
    store = kind.store
    for message in (user("q"), answer("a")):
        await store.append(ctx(), message)
    writer = ctx("writer")
    await store.acquire(writer)
    shown = AssistantMessage(id="v2", content="another answer", stop=app_stopped_stop())
    await store.save_draft(writer, shown, parent="q")
    await store.release(writer)
    await store.acquire(ctx("next"))
    if kind.keeps_drafts:
        assert await path(store) == ["q", "v2"]
        assert await store.parent_of(ctx(), "v2") == ("q", "assistant")
    else:
        assert await path(store) == ["q", "a"]
    await store.release(ctx("next"))


# ---------------------------------------------------------------------------- tool starts


async def test_tool_starts_are_read_back_per_asking_message(kind: Kind) -> None:
    store = kind.store
    await store.append(ctx(), user("q"))  # opens the file: the askers come after it
    first = AssistantMessage(
        id="ask1", tool_calls=(ToolCall("c1", "t", {}), ToolCall("c2", "t", {}))
    )
    second = AssistantMessage(id="ask2", tool_calls=(ToolCall("c3", "t", {}),))
    await store.append(ctx(), first)
    await store.record_tool_start(ctx(), first.tool_calls[0])
    await store.append(ctx(), second)
    await store.record_tool_start(ctx(), second.tool_calls[0])
    if kind.records_tool_starts:
        assert await store.started_tool_calls(ctx(), first) == {"c1"}
        assert await store.started_tool_calls(ctx(), second) == {"c3"}
        assert await store.started_tool_calls(ctx(session_id="other"), first) == set()
    else:
        # It cannot tell: Resume then never says a call did not run.
        assert await store.started_tool_calls(ctx(), first) is None
        assert await store.started_tool_calls(ctx(), second) is None


# ---------------------------------------------------------------------------- operations
# outside a request, each taking the session's lease (engine._session_ops)


async def test_switch_version_takes_the_lease(kind: Kind) -> None:
    store = kind.store
    for message in (UserMessage(id="q", content="q"), AssistantMessage(id="a", content="a")):
        await store.append(ctx(), message)
    await store.append(ctx(), AssistantMessage(id="a2", content="a2"), parent="q")
    running = ctx("running")
    await store.acquire(running)
    with pytest.raises(AgentBusyError):
        await switch_version(store, "s", "a")
    assert await path(store) == ["q", "a2"], "never under a running request"
    await store.release(running)
    assert await switch_version(store, "s", "a") == "a"
    assert await path(store) == ["q", "a"]
    await store.acquire(running)  # the switch gave the lease back
    await store.release(running)


async def leave_draft(store: SessionStore) -> None:
    """A request that streamed part of an answer, then died (its lease released as a
    takeover of a dead process's would be)."""
    writer = ctx("writer")
    await store.acquire(writer)
    await store.append(writer, UserMessage(id="q", content="q"))
    draft = AssistantMessage(id="d", content="half an answer", stop=app_stopped_stop())
    await store.save_draft(writer, draft)
    await store.release(writer)


async def test_settle_draft_turns_a_dead_process_draft_into_its_message(kind: Kind) -> None:
    store = kind.store
    await leave_draft(store)
    assert await settle_draft(store, "s") is kind.keeps_drafts
    assert await path(store) == (["q", "d"] if kind.keeps_drafts else ["q"])
    assert await settle_draft(store, "s") is False, "nothing left to settle"
    await store.acquire(ctx("next"))  # the lease was given back
    await store.release(ctx("next"))


async def test_a_live_request_draft_is_left_alone(kind: Kind) -> None:
    store = kind.store
    writer = ctx("writer")
    await store.acquire(writer)
    await store.append(writer, UserMessage(id="q", content="q"))
    await store.save_draft(writer, AssistantMessage(id="d", content="streaming"))
    assert await settle_draft(store, "s") is False
    await store.release(writer)


# ---------------------------------------------------------------------------- attachments


def with_picture(text: str, blob: Blob) -> UserMessage:
    part = ImagePart(blob.media_type, 1, 1, blob.size, blob.sha256)
    return UserMessage(id=text, content=text, attachments=(part,))


async def test_an_attachment_bytes_go_with_its_message(kind: Kind) -> None:
    store = kind.store
    assert isinstance(store, BlobStore)
    picture = Blob.of(b"a picture", "image/png")
    await store.append(ctx(), with_picture("u1", picture), blobs=[picture])
    assert await store.read_blob(picture.sha256) == picture
    # Bytes already kept need not be given again; the batch form takes bytes too.
    other = Blob.of(b"another picture", "image/webp")
    await store.append(ctx(), with_picture("u2", picture))
    await store.append_many(ctx(), [with_picture("u3", other)], blobs=[other])
    assert await path(store) == ["u1", "u2", "u3"]
    assert await store.read_blob(other.sha256) == other
    assert await store.read_blob(Blob.of(b"never", "image/png").sha256) is None


async def test_a_message_without_its_bytes_or_bytes_without_a_message_are_refused(
    kind: Kind,
) -> None:
    store = kind.store
    picture = Blob.of(b"a picture", "image/png")
    with pytest.raises(StorageError) as caught:
        await store.append(ctx(), with_picture("u1", picture))
    assert caught.value.key == "storage.missing_blob"
    with pytest.raises(StorageError):
        await store.append_many(ctx(), [user("a"), with_picture("u1", picture)])
    with pytest.raises(ValueError, match="not referred to"):
        await store.append(ctx(), user("plain"), blobs=[picture])
    assert await path(store) == []
    assert await store.read_blob(picture.sha256) is None


def test_both_stores_are_session_stores() -> None:
    # mypy checks the declarations; this is the same seam the agent uses at run time.
    assert isinstance(InMemoryHistory(), SessionStore)
    assert issubclass(SQLiteSessionExtension, SessionStore)

"""The store contract: what the agent asks of the place a conversation's history lives.

`SessionStore` is the whole contract, one `Protocol`, and every store implements all of it:
the SQLite store (`engine.storage.SQLiteSessionExtension`) and the in-memory default
(`engine.InMemoryHistory`) declare it, and mypy checks both against it. One contract test
suite (tests/engine/test_store_contract.py) runs against both. The agent calls a store only
through this type: no method is looked up by name, and every call is awaited.

========================================  ===============================================
history                                   what it does
========================================  ===============================================
``restore(ctx, leaf=None)``               the path from the root to the active leaf (to
                                          ``leaf``; ``[]`` for `ROOT`), oldest first
``restore_tail(ctx, limit, before_seq)``  the last ``limit`` records of that path (of the
                                          path above ``before_seq``), oldest first: a
                                          resume point is read without the whole history
``append(ctx, message, parent=None,      store one message under the active leaf (under
blobs=())``                               ``parent``; `ROOT`: as a root), and make it the
                                          active leaf, in one write
``append_many(ctx, messages, blobs=())``  store several, one under the other, in one write:
                                          all or none, nothing between them
========================================  ===============================================

Attachments' bytes (`engine.attachments.Blob`) go with the append of the message that refers
to them, in the same write: ``blobs`` holds the bytes its attachments refer to (each stored
once by SHA-256; bytes already stored need not be given again). Bytes no appended message
refers to are refused (`ValueError`), and so is a message referring to bytes neither given
nor stored (`StorageError` ``storage.missing_blob``); either way nothing is stored. A store
that keeps bytes gives them back by ``read_blob(sha256)`` (`BlobStore`, apart from the
contract so that a host's store written before attachments stays whole).

Leases: ``acquire(ctx)`` takes the session for the request ``ctx.request_id`` or raises
`AgentBusyError` (a second request, in this process or another, is refused); taking it turns
a draft a gone holder left into the message it becomes. It may return a `StoreLease`, whose
``wait_lost()`` returns once another process took the lease over: the agent then ends the
request with `LeaseLostError`. ``release(ctx)`` gives it back (nothing if it took none).

Drafts: while a step streams, the agent hands ``save_draft(ctx, message, parent=None)`` the
assistant message so far (text and reasoning, stop ``interrupted`` with raw
``app_stopped``, no tool calls) at most about once a second; ``restore_draft(ctx)`` returns
a draft whose writer is gone as the `StoredMessage` it will become, so a read-only
`Agent.resume_point` sees it as the history's last message, and ``restore_tail(ctx, limit,
draft.seq)`` reads its ancestors (the path it settles on). A store may keep no drafts:
``save_draft`` then keeps nothing and ``restore_draft`` returns None (a kill loses the
streaming answer).

Tool starts: ``record_tool_start(ctx, call)`` is awaited after ``before_tool`` let a call
through and just before it runs (if it raises, the call does not run);
``started_tool_calls(ctx, asker)`` returns the ids of the assistant message ``asker``'s calls
that started, or None when the store cannot tell: Resume then says which unanswered calls
never ran, instead of "may or may not have completed" for each. A store that keeps no
records records nothing and always answers None, and never says a call did not run.

The tree (versions: regenerate, edit, the "‹ 2/3 ›" switcher): ``switch_to(ctx,
message_id)`` makes the newest leaf under a message active and returns its id;
``parent_of(ctx, message_id)`` returns (its parent's id or None, its type name);
``branch(ctx, message_id | None)`` only moves the active leaf (for hosts: the agent never
moves the path without storing). A new version's first message is an ``append`` with
``parent=``, so the version and the move of the path to it are never apart. Unknown ids
raise `MessageNotFoundError` and change nothing.

A host's own store plugs in as an extension (the first of ``Agent(extensions=[...])`` that
is a store): an object implementing `SessionStore` is used as it is (a subclass of it is
checked by mypy; any other object is checked by name when the agent is built). DESIGN.md's
smallest store, a plain object with only ``restore(ctx)`` and ``append(ctx, message)`` (a
`BasicStore`), is used through `BasicStoreAdapter`: no versions, no drafts, no tool-start
records, leases within this process. An object with ``restore`` and ``append`` and some but
not all of the rest is refused with `TypeError` naming what it lacks: a store whose
``record_tool_start`` is misspelt must not quietly record nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from .attachments import Blob, blob_refs, check_blobs
from .errors import AgentBusyError, ErrorAction, MessageNotFoundError, StorageError
from .messages import Message, UserMessage, attachments_of
from .sentences import Phrase

if TYPE_CHECKING:
    from .extensions import RunContext
    from .messages import AssistantMessage, ToolCall

__all__ = [
    "ROOT",
    "BasicStore",
    "BasicStoreAdapter",
    "InMemoryHistory",
    "ProcessLeases",
    "Root",
    "SessionStore",
    "StoreLease",
    "StoredMessage",
    "find_store",
]


class Root(Enum):
    """The place before every message: a message stored with ``parent=ROOT`` is a new root
    (an edit of a conversation's first question), and the path to ROOT is empty."""

    ROOT = "root"


#: ``parent=ROOT``: store the message as a root (see `Root`)
ROOT: Final = Root.ROOT


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as storage holds it: its per-session sequence number and request id."""

    seq: int
    request_id: str
    message: Message


class StoreLease(Protocol):
    """What ``acquire`` may return: a lease the agent watches while its request runs."""

    async def wait_lost(self) -> None:
        """Return once another process took the lease over (never, if it is released)."""


@runtime_checkable
class SessionStore(Protocol):
    """Where a conversation's history lives, as the agent uses it (see the module)."""

    # -- history
    async def restore(
        self, ctx: RunContext, *, leaf: str | Root | None = None
    ) -> Sequence[Message]:
        """The path from the root to the active leaf (to ``leaf``: ``[]`` for ROOT)."""
        ...

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> Sequence[StoredMessage]:
        """The last ``limit`` records of the path (of the path above ``before_seq``)."""
        ...

    async def append(
        self,
        ctx: RunContext,
        message: Message,
        *,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        """Store ``message`` (and the bytes its attachments refer to) under the active leaf
        (or ``parent``); it becomes the leaf."""
        ...

    async def append_many(
        self, ctx: RunContext, messages: Sequence[Message], *, blobs: Sequence[Blob] = ()
    ) -> None:
        """Store ``messages`` one under the other in one write, all or none."""
        ...

    # -- the lease
    async def acquire(self, ctx: RunContext) -> StoreLease | None:
        """Take the session for ``ctx.request_id``; `AgentBusyError` if another has it."""
        ...

    async def release(self, ctx: RunContext) -> None:
        """Give back the lease ``ctx.request_id`` took (nothing if it took none)."""
        ...

    # -- drafts
    async def save_draft(
        self, ctx: RunContext, message: AssistantMessage, *, parent: str | Root | None = None
    ) -> None:
        """Keep what the request's streaming step has shown (or keep nothing)."""
        ...

    async def restore_draft(self, ctx: RunContext) -> StoredMessage | None:
        """The draft a gone writer left, as the message it becomes; None if none is kept."""
        ...

    # -- tool starts
    async def record_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        """Record that ``call`` is about to run (or record nothing)."""
        ...

    async def started_tool_calls(
        self, ctx: RunContext, asker: AssistantMessage
    ) -> AbstractSet[str] | None:
        """The ids of ``asker``'s calls that started; None when the store cannot tell."""
        ...

    # -- the tree
    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        """Make the newest leaf under ``message_id`` active; return its id."""
        ...

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        """The message's parent id (None for a root) and its type name."""
        ...

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        """Make ``message_id`` the active leaf (None: before the first message)."""
        ...


@runtime_checkable
class BlobStore(Protocol):
    """A store that gives back attachments' bytes (both of the engine's stores do). Apart
    from `SessionStore` so that a host's store written before attachments stays whole."""

    async def read_blob(self, sha256: str) -> Blob | None:
        """The bytes an attachment refers to by ``sha256``; None when none are stored."""
        ...


@runtime_checkable
class BasicStore(Protocol):
    """The smallest store DESIGN.md promises: ``restore(ctx)`` and ``append(ctx, message)``."""

    async def restore(self, ctx: RunContext) -> Sequence[Message]: ...
    async def append(self, ctx: RunContext, message: Message) -> None: ...


#: The methods of `SessionStore` beyond `BasicStore`'s: an object with some but not all of
#: them is refused (see `find_store`).
_BEYOND_BASIC = (
    "restore_tail",
    "append_many",
    "acquire",
    "release",
    "save_draft",
    "restore_draft",
    "record_tool_start",
    "started_tool_calls",
    "switch_to",
    "parent_of",
    "branch",
)


class ProcessLeases:
    """Leases kept in this process: a second request on a busy session is refused."""

    def __init__(self) -> None:
        self._busy: dict[str, str] = {}  # session id → the request holding it

    def acquire(self, ctx: RunContext) -> None:
        """Take ``ctx.session_id`` for ``ctx.request_id``.

        Raises:
            AgentBusyError: another request of this process holds it.
        """
        holder = self._busy.get(ctx.session_id)
        if holder is not None:
            raise AgentBusyError(
                ctx.session_id, Phrase("agent.busy.in_process", {"request_id": holder})
            )
        self._busy[ctx.session_id] = ctx.request_id

    def release(self, ctx: RunContext) -> None:
        """Give the session back if ``ctx.request_id`` holds it."""
        if self._busy.get(ctx.session_id) == ctx.request_id:
            del self._busy[ctx.session_id]


class BasicStoreAdapter(SessionStore, BlobStore):
    """A `BasicStore` as a `SessionStore`: the history is one line (no versions), it keeps
    no drafts and no tool-start records, and its leases hold within this process."""

    def __init__(self, store: BasicStore) -> None:
        self.store = store
        self._leases = ProcessLeases()

    def __repr__(self) -> str:
        return f"<BasicStoreAdapter {self.store!r}>"

    async def restore(
        self, ctx: RunContext, *, leaf: str | Root | None = None
    ) -> Sequence[Message]:
        if leaf is not None:
            raise self._no_versions()
        return await self.store.restore(ctx)

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> Sequence[StoredMessage]:
        messages = await self.store.restore(ctx)
        end = len(messages) if before_seq is None else min(len(messages), before_seq - 1)
        start = max(0, end - limit) if limit > 0 else end
        return [StoredMessage(i + 1, "", messages[i]) for i in range(start, end)]

    async def append(
        self,
        ctx: RunContext,
        message: Message,
        *,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        if parent is not None:
            raise self._no_versions()
        self._refuse_attachments([message], blobs)
        await self.store.append(ctx, message)

    async def append_many(
        self, ctx: RunContext, messages: Sequence[Message], *, blobs: Sequence[Blob] = ()
    ) -> None:
        self._refuse_attachments(messages, blobs)
        # One by one: a basic store has no batch write (a failure leaves the first ones).
        for message in messages:
            await self.store.append(ctx, message)

    async def read_blob(self, sha256: str) -> Blob | None:
        return None  # keeps no bytes

    def _refuse_attachments(self, messages: Sequence[Message], blobs: Sequence[Blob]) -> None:
        if blobs or any(isinstance(m, UserMessage) and m.attachments for m in messages):
            raise TypeError(
                f"{type(self.store).__name__} keeps no attachments: it is a basic store "
                "(restore and append only); implement engine.store.SessionStore to keep them"
            )

    async def acquire(self, ctx: RunContext) -> None:
        self._leases.acquire(ctx)

    async def release(self, ctx: RunContext) -> None:
        self._leases.release(ctx)

    async def save_draft(
        self, ctx: RunContext, message: AssistantMessage, *, parent: str | Root | None = None
    ) -> None:
        return None  # keeps no drafts

    async def restore_draft(self, ctx: RunContext) -> StoredMessage | None:
        return None

    async def record_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        return None  # keeps no records: never says a call did not run

    async def started_tool_calls(
        self, ctx: RunContext, asker: AssistantMessage
    ) -> AbstractSet[str] | None:
        return None

    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        raise self._no_versions()

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        raise self._no_versions()

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        raise self._no_versions()

    def _no_versions(self) -> TypeError:
        return TypeError(
            f"{type(self.store).__name__} keeps no versions: it is a basic store (restore and "
            "append only); implement engine.store.SessionStore for regenerate, edit and "
            "switching versions"
        )


class InMemoryHistory(SessionStore, BlobStore):
    """The default store: one tree of messages per session, in this process only.

    Like the SQLite store, the history is the path from the root to the session's active
    leaf, and an append goes under the active leaf (or the ``parent`` it names) and becomes
    it. It refuses a second concurrent request on a session like the SQLite lease does. It
    keeps no drafts (nothing outlives the process to read one) and no tool-start records:
    `started_tool_calls` answers None, so Resume never says a call did not run.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, list[StoredMessage]] = {}  # every message, seq order
        self._parents: dict[str, dict[int, int | None]] = {}
        self._active: dict[str, int | None] = {}
        self._blobs: dict[str, Blob] = {}  # every attachment's bytes, kept for the process
        self._leases = ProcessLeases()

    def _path(self, sid: str, leaf: int | None) -> list[StoredMessage]:
        records, parents = self._sessions.get(sid, []), self._parents.get(sid, {})
        path: list[StoredMessage] = []
        while leaf is not None:
            path.append(records[leaf - 1])
            leaf = parents[leaf]
        return path[::-1]

    def _seq_of(self, sid: str, message_id: str) -> int:
        for record in reversed(self._sessions.get(sid, [])):
            if record.message.id == message_id:
                return record.seq
        raise MessageNotFoundError(sid, message_id, "memory")

    def _place(self, sid: str, at: str | Root | None) -> int | None:
        """The seq of the message ``at`` names (None for ROOT); the active leaf for None."""
        if at is None:
            return self._active.get(sid)
        return None if at is ROOT else self._seq_of(sid, at)

    async def restore(self, ctx: RunContext, *, leaf: str | Root | None = None) -> list[Message]:
        """The path to the active leaf (or to ``leaf``; ``[]`` for ROOT)."""
        sid = ctx.session_id
        return [r.message for r in self._path(sid, self._place(sid, leaf))]

    async def restore_tail(
        self, ctx: RunContext, limit: int, before_seq: int | None = None
    ) -> list[StoredMessage]:
        sid = ctx.session_id
        if before_seq is not None:
            leaf = self._parents.get(sid, {}).get(before_seq)
        else:
            leaf = self._active.get(sid)
        return self._path(sid, leaf)[-limit:] if limit > 0 else []

    async def append(
        self,
        ctx: RunContext,
        message: Message,
        *,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        """Store ``message`` under the active leaf (or ``parent``); it becomes the leaf."""
        sid = ctx.session_id
        under = self._place(sid, parent)  # an unknown parent raises before anything changes
        self._keep_blobs([message], blobs)
        self._add(ctx, message, under)

    def _keep_blobs(self, messages: Sequence[Message], blobs: Sequence[Blob]) -> None:
        """Keep the bytes the messages refer to, refusing as the SQLite store does before
        anything changes: bytes no message refers to, a reference to bytes not kept."""
        check_blobs(attachments_of(messages), blobs)
        given = {blob.sha256: blob for blob in blobs}
        for ref in blob_refs(attachments_of(messages)):
            if ref not in given and ref not in self._blobs:
                raise StorageError(
                    key="storage.missing_blob",
                    params={"ref": ref[:12], "path": "memory"},
                    action=ErrorAction.NONE,
                )
        for ref, blob in given.items():
            self._blobs.setdefault(ref, blob)

    async def read_blob(self, sha256: str) -> Blob | None:
        """The bytes kept for ``sha256`` (kept as long as this object lives: nothing here
        deletes a conversation)."""
        return self._blobs.get(sha256)

    def _add(self, ctx: RunContext, message: Message, under: int | None) -> None:
        sid = ctx.session_id
        records = self._sessions.setdefault(sid, [])
        seq = len(records) + 1
        records.append(StoredMessage(seq, ctx.request_id, message))
        self._parents.setdefault(sid, {})[seq] = under
        self._active[sid] = seq

    async def append_many(
        self, ctx: RunContext, messages: Sequence[Message], *, blobs: Sequence[Blob] = ()
    ) -> None:
        """Append ``messages`` one under the other, all at once (as the SQLite store's one
        transaction does: nothing can come between them, and nothing can fail once the
        bytes they refer to are found)."""
        self._keep_blobs(messages, blobs)
        for message in messages:
            self._add(ctx, message, self._active.get(ctx.session_id))

    async def acquire(self, ctx: RunContext) -> None:
        self._leases.acquire(ctx)

    async def release(self, ctx: RunContext) -> None:
        self._leases.release(ctx)

    async def save_draft(
        self, ctx: RunContext, message: AssistantMessage, *, parent: str | Root | None = None
    ) -> None:
        return None  # a draft is for a process that dies: this history dies with it

    async def restore_draft(self, ctx: RunContext) -> StoredMessage | None:
        return None

    async def record_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        return None  # no records: an unanswered call may or may not have run

    async def started_tool_calls(
        self, ctx: RunContext, asker: AssistantMessage
    ) -> AbstractSet[str] | None:
        return None

    async def switch_to(self, ctx: RunContext, message_id: str) -> str:
        sid = ctx.session_id
        top = self._seq_of(sid, message_id)
        parents = self._parents.get(sid, {})
        below = {top}
        for seq in range(top + 1, len(self._sessions[sid]) + 1):  # children come later
            if parents[seq] in below:
                below.add(seq)
        self._active[sid] = leaf = max(below)
        return self._sessions[sid][leaf - 1].message.id

    async def parent_of(self, ctx: RunContext, message_id: str) -> tuple[str | None, str]:
        sid = ctx.session_id
        seq = self._seq_of(sid, message_id)
        parent = self._parents[sid][seq]
        kind = self._sessions[sid][seq - 1].message.type_name
        return (None if parent is None else self._sessions[sid][parent - 1].message.id), kind

    async def branch(self, ctx: RunContext, message_id: str | None) -> None:
        sid = ctx.session_id
        self._active[sid] = None if message_id is None else self._seq_of(sid, message_id)


def find_store(extensions: Iterable[object]) -> SessionStore | None:
    """The store among ``extensions``: the first that is a `SessionStore` or a `BasicStore`.

    Raises:
        TypeError: that extension has ``restore`` and ``append`` and some, not all, of the
            rest of `SessionStore` (a misspelt or missing method would silently turn a
            safety feature off).
    """
    for ext in extensions:
        if isinstance(ext, SessionStore):
            return ext
        if isinstance(ext, BasicStore):
            has = [name for name in _BEYOND_BASIC if callable(getattr(ext, name, None))]
            if has:
                missing = [name for name in _BEYOND_BASIC if name not in has]
                raise TypeError(
                    f"{type(ext).__name__} is not a whole store: it has {', '.join(has)} but "
                    f"not {', '.join(missing)}. A store implements every method of "
                    "engine.store.SessionStore, or only restore and append."
                )
            return BasicStoreAdapter(ext)
    return None

"""`SQLiteSessionStorage`: conversations in one SQLite file, durable message by message.

The storage is a facade over parts composed around one core; each part is given the core
(and the other parts it needs) and holds no connection of its own:

* `engine.storage.core.StorageCore`: the connections and the transactions. One writer (every
  write one ``BEGIN IMMEDIATE`` transaction under its lock, finished even if its caller is
  cancelled) and a few read connections: WAL readers never wait behind a write, so a search
  that scans or an export page never delays an append or a draft.
* `Sessions` (`engine.storage.sessions`): the conversations' rows.
* `History` (`engine.storage.history`): appends, fenced by the lease when given one, and the
  history's reads.
* `Blobs` (`engine.storage.blobs`): attachments' bytes, once each by SHA-256, written in the
  transaction of the append whose message refers to them, deleted with the last reference.
* `MessageTree` (`engine.storage.tree`): versions, branches, forks; the paths a killed
  process cut short are mended when the file opens.
* `Drafts` (`engine.storage.drafts`): a streaming step's draft and the tool start records.
* `Leases` (`engine.storage.leases`): taking, keeping and giving back session leases.
* `MessageSearch` (`engine.storage.search`): full-text search of every message.
* `ConversationTransfer` (`engine.storage.transfer`): whole conversations out (an export's
  pages) and in (an import's one transaction).
* `Integrity` (`engine.storage.integrity`): the ``writers`` row, and the full check after an
  unclean exit or on request.

Reading and `append` never take the lease; only `acquire_lease` does. The file is private
(folder 0700, file 0600) and a file that cannot be written is refused before SQLite opens it
(`engine.storage.files`); opening never reads more than the file's header and schema
(`engine.storage.migrations`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..attachments import Blob
from ..extensions import Root, StoredMessage
from ..messages import AssistantMessage, Message
from .blobs import Blobs
from .core import StorageCore, Synchronous
from .drafts import Drafts
from .history import History
from .integrity import Integrity, Pause
from .lease import Lease, LeaseHolder, LeasePolicy
from .leases import Leases
from .migrations import Progress
from .rows import SessionInfo
from .search import MessageSearch, SearchHit, casefold
from .sessions import Sessions
from .transfer import PAGE_SIZE, ArchivedMessage, ArchivedSession, ConversationTransfer
from .tree import MendedPath, MessageTree

if TYPE_CHECKING:
    # engine.archive imports the storage: the record's type only, here.
    from ..archive.records import ImportedConversation

__all__ = ["SQLiteSessionStorage", "SessionInfo", "Synchronous"]


class SQLiteSessionStorage:
    """Conversations, their messages (a tree of versions) and their leases in one SQLite file.

    Each method is its part's (the module docstring lists them); see there for the details.

    Args:
        path: the database file; it and its folder are created if missing.
        synchronous: SQLite's ``synchronous`` setting. ``FULL`` (the default) makes each
            committed message survive a power cut; ``NORMAL`` only a crash of the process.
        lease_stale_after: seconds after which a lease whose heartbeat stopped is taken over.
        heartbeat_interval: seconds between heartbeats of a held lease (default: a third of
            `lease_stale_after`).
        lease_host: the host name recorded in this storage's leases instead of the
            machine's (tests use it to play a second machine sharing the file).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        lease_stale_after: float = 30.0,
        heartbeat_interval: float | None = None,
        lease_host: str | None = None,
    ) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        if lease_stale_after <= 0:
            raise ValueError("lease_stale_after must be a positive number of seconds")
        self._policy = LeasePolicy(
            stale_after=float(lease_stale_after),
            heartbeat_interval=float(
                heartbeat_interval if heartbeat_interval is not None else lease_stale_after / 3
            ),
            host=lease_host,
        )
        core = StorageCore(Path(path), synchronous=synchronous, functions={"casefold": casefold})
        self._core = core
        self._sessions = Sessions(core)
        self._tree = MessageTree(core, self._policy)
        self._blobs = Blobs(core)
        self._history = History(core, self._tree, self._blobs)
        self._drafts = Drafts(core, self._tree, self._policy)
        self._leases = Leases(core, self._policy)
        self._search = MessageSearch(core)
        self._transfer = ConversationTransfer(core, self._blobs)
        self._integrity = Integrity(core, lease_host)

    def __repr__(self) -> str:
        return f"<SQLiteSessionStorage {str(self.path)!r}>"

    @property
    def path(self) -> Path:
        """The database file."""
        return self._core.path

    @property
    def synchronous(self) -> Synchronous:
        """SQLite's ``synchronous`` setting of the writer."""
        return self._core.synchronous

    @property
    def lease_stale_after(self) -> float:
        """Seconds after which a lease whose heartbeat stopped is taken over."""
        return self._policy.stale_after

    @property
    def heartbeat_interval(self) -> float:
        """Seconds between heartbeats of a held lease."""
        return self._policy.heartbeat_interval

    @property
    def lease_host(self) -> str | None:
        """The host name recorded in this storage's leases instead of the machine's."""
        return self._policy.host

    @property
    def on_migration_progress(self) -> Progress | None:
        """Called with the fraction done (0..1) while opening the file runs a long migration
        (building the search index of an older file), from the thread that migrates."""
        return self._core.on_migration_progress

    @on_migration_progress.setter
    def on_migration_progress(self, progress: Progress | None) -> None:
        self._core.on_migration_progress = progress

    async def close(self) -> None:
        """Release held leases, stop running checks, let writes in progress finish and reads
        in progress end, close the file. Idempotent."""
        if not self._core.begin_close():
            return
        await self._leases.release_all()
        self._integrity.stop_checks()
        await self._core.close()

    # ------------------------------------------------------------------ sessions

    async def create_session(
        self,
        session_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """Create an empty conversation (`Sessions.create_session`)."""
        return await self._sessions.create_session(session_id, title, metadata)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        """The conversation, or None (`Sessions.get_session`)."""
        return await self._sessions.get_session(session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        """Every conversation, the most recently updated first (`Sessions.list_sessions`)."""
        return await self._sessions.list_sessions()

    async def rename_session(self, session_id: str, title: str | None) -> None:
        """Set the conversation's title (`Sessions.rename_session`)."""
        await self._sessions.rename_session(session_id, title)

    async def update_metadata(self, session_id: str, mapping: Mapping[str, Any]) -> dict[str, Any]:
        """Merge into the conversation's metadata (`Sessions.update_metadata`)."""
        return await self._sessions.update_metadata(session_id, mapping)

    async def delete_session(self, session_id: str) -> None:
        """Delete the conversation and all of it (`Sessions.delete_session`)."""
        await self._sessions.delete_session(session_id)

    # ------------------------------------------------------------------ messages

    async def append(
        self,
        session_id: str,
        request_id: str,
        message: Message,
        *,
        lease: Lease | None = None,
        parent: str | Root | None = None,
        blobs: Sequence[Blob] = (),
    ) -> int:
        """Store one message (and the bytes its attachments refer to) in its own
        transaction; its seq (`History.append`)."""
        return await self._history.append(
            session_id, request_id, message, lease=lease, parent=parent, blobs=blobs
        )

    async def append_many(
        self,
        session_id: str,
        request_id: str,
        messages: Sequence[Message],
        *,
        lease: Lease | None = None,
        blobs: Sequence[Blob] = (),
    ) -> list[int]:
        """Store messages in one transaction, all or none (`History.append_many`)."""
        return await self._history.append_many(
            session_id, request_id, messages, lease=lease, blobs=blobs
        )

    async def read_blob(self, sha256: str) -> Blob | None:
        """An attachment's stored bytes, or None (`Blobs.read_blob`)."""
        return await self._blobs.read_blob(sha256)

    async def load(self, session_id: str, *, leaf: str | Root | None = None) -> list[Message]:
        """The history (the active path, or the path to `leaf`), oldest first
        (`History.load`)."""
        return await self._history.load(session_id, leaf=leaf)

    async def load_tail(
        self, session_id: str, limit: int, before_seq: int | None = None
    ) -> list[StoredMessage]:
        """The last `limit` messages of the path, oldest first (`History.load_tail`)."""
        return await self._history.load_tail(session_id, limit, before_seq)

    async def count_messages(self, session_id: str) -> int:
        """How many messages the active path holds (`History.count_messages`)."""
        return await self._history.count_messages(session_id)

    async def count_all_messages(self, session_id: str) -> int:
        """How many messages the conversation holds on every branch."""
        return await self._history.count_all_messages(session_id)

    # ------------------------------------------------------------------ drafts, tool starts

    async def save_draft(
        self,
        session_id: str,
        request_id: str,
        message: AssistantMessage,
        token: str | None = None,
        *,
        parent: str | Root | None = None,
    ) -> bool:
        """Keep what a streaming step has shown so far (`Drafts.save_draft`)."""
        return await self._drafts.save_draft(session_id, request_id, message, token, parent=parent)

    async def load_draft(self, session_id: str) -> StoredMessage | None:
        """The draft a gone holder left, as the message it becomes (`Drafts.load_draft`)."""
        return await self._drafts.load_draft(session_id)

    async def record_tool_start(
        self, session_id: str, tool_call_id: str, *, lease: Lease | None = None
    ) -> None:
        """Record that a tool call is about to run (`Drafts.record_tool_start`)."""
        await self._drafts.record_tool_start(session_id, tool_call_id, lease=lease)

    async def started_tool_calls(self, session_id: str, ids: Iterable[str]) -> set[str]:
        """Which of these tool calls have a start record (`Drafts.started_tool_calls`)."""
        return await self._drafts.started_tool_calls(session_id, ids)

    async def tool_starts_recorded_since(self) -> float:
        """When this file began recording every tool start
        (`Drafts.tool_starts_recorded_since`)."""
        return await self._drafts.tool_starts_recorded_since()

    # ------------------------------------------------------------------ integrity

    async def integrity_check_due(self) -> bool:
        """Whether an unclean exit calls for the full check
        (`Integrity.integrity_check_due`)."""
        return await self._integrity.integrity_check_due()

    async def check_integrity(self, *, pause: Pause | None = None) -> bool:
        """Read every page of the file, in the background (`Integrity.check_integrity`)."""
        return await self._integrity.check_integrity(pause=pause)

    # ------------------------------------------------------------------ leases

    async def lease_holder(self, session_id: str) -> LeaseHolder | None:
        """Who holds the session's lease, or None (`Leases.lease_holder`)."""
        return await self._leases.lease_holder(session_id)

    async def acquire_lease(self, session_id: str) -> Lease:
        """Take the session's lease for one request (`Leases.acquire_lease`)."""
        return await self._leases.acquire_lease(session_id)

    # ------------------------------------------------------------------ the tree

    async def mended(self) -> tuple[MendedPath, ...]:
        """The paths opening this file put back (`MessageTree.mended`)."""
        return await self._tree.mended()

    async def branch_from(
        self, session_id: str, message_id: str | None, *, lease: Lease | None = None
    ) -> None:
        """Make a message the active leaf (`MessageTree.branch_from`)."""
        await self._tree.branch_from(session_id, message_id, lease=lease)

    async def switch_to(
        self, session_id: str, message_id: str, *, lease: Lease | None = None
    ) -> str:
        """Make the newest leaf under a message active; its id (`MessageTree.switch_to`)."""
        return await self._tree.switch_to(session_id, message_id, lease=lease)

    async def parent_of(self, session_id: str, message_id: str) -> tuple[str | None, str]:
        """A message's parent id and its type name (`MessageTree.parent_of`)."""
        return await self._tree.parent_of(session_id, message_id)

    async def siblings(self, session_id: str, message_id: str) -> list[str]:
        """A message and its siblings, oldest first (`MessageTree.siblings`)."""
        return await self._tree.siblings(session_id, message_id)

    async def versions(self, session_id: str, seqs: Iterable[int]) -> dict[int, tuple[int, int]]:
        """Each message's place among its siblings (`MessageTree.versions`)."""
        return await self._tree.versions(session_id, seqs)

    async def fork_session(
        self,
        session_id: str,
        message_id: str,
        *,
        new_session_id: str | None = None,
        title: str | None = None,
    ) -> str:
        """A new conversation holding the path to a message (`MessageTree.fork_session`)."""
        return await self._tree.fork_session(
            session_id, message_id, new_session_id=new_session_id, title=title
        )

    # ------------------------------------------------------------------ search

    async def search_messages(
        self, query: str, *, limit: int = 50, session_id: str | None = None
    ) -> list[SearchHit]:
        """Messages holding every term, newest first (`MessageSearch.search_messages`)."""
        return await self._search.search_messages(query, limit=limit, session_id=session_id)

    async def find_on_path(self, session_id: str, query: str) -> list[SearchHit]:
        """The shown messages holding every term, in order (`MessageSearch.find_on_path`)."""
        return await self._search.find_on_path(session_id, query)

    async def search_titles(self, query: str, *, limit: int = 50) -> list[str]:
        """Conversations whose title holds every term (`MessageSearch.search_titles`)."""
        return await self._search.search_titles(query, limit=limit)

    async def path_depth(self, session_id: str, seq: int) -> int | None:
        """How far up the active path a message is (`MessageSearch.path_depth`)."""
        return await self._search.path_depth(session_id, seq)

    async def path_seq_at(self, session_id: str, depth: int) -> int | None:
        """The message `depth` steps up the active path (`MessageSearch.path_seq_at`)."""
        return await self._search.path_seq_at(session_id, depth)

    # ------------------------------------------------------------------ export and import

    async def archived_session_ids(self) -> list[str]:
        """Every conversation's id, the oldest first (`ConversationTransfer`)."""
        return await self._transfer.archived_session_ids()

    async def archived_session(self, session_id: str) -> ArchivedSession | None:
        """The conversation's row and tool start records (`ConversationTransfer`)."""
        return await self._transfer.archived_session(session_id)

    async def count_every_message(self, session_ids: Sequence[str]) -> int:
        """How many messages these conversations hold on every branch."""
        return await self._transfer.count_every_message(session_ids)

    async def count_other_versions(self, session_id: str) -> int:
        """How many versions the conversation has besides the one it shows."""
        return await self._transfer.count_other_versions(session_id)

    async def active_path_seqs(self, session_id: str) -> list[int]:
        """The seqs of the active path, root first."""
        return await self._transfer.active_path_seqs(session_id)

    def archived_messages(
        self, session_id: str, *, page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[list[ArchivedMessage], None]:
        """Every message of every branch, a page at a time
        (`ConversationTransfer.archived_messages`)."""
        return self._transfer.archived_messages(session_id, page_size=page_size)

    def archived_path(
        self, session_id: str, seqs: Sequence[int], *, page_size: int = PAGE_SIZE
    ) -> AsyncGenerator[list[ArchivedMessage], None]:
        """The messages of `seqs`, a page at a time (`ConversationTransfer.archived_path`)."""
        return self._transfer.archived_path(session_id, seqs, page_size=page_size)

    async def import_conversation(self, conversation: ImportedConversation) -> str | None:
        """Store an imported conversation whole, in one transaction; its id, or None when
        it was there already (`ConversationTransfer.import_conversation`)."""
        return await self._transfer.import_conversation(conversation)

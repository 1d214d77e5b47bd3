"""The open conversations: which one is shown, its transcript pages, its metadata and its kept
error, and the list's create, rename and delete.

One `TranscriptModel` is kept per conversation that is shown or still answering (a request
keeps folding into its model while the person looks at another conversation). Pages of
`PAGE_SIZE` messages load from the end; older ones are put in front on demand. A failed
request's error is kept in the conversation's metadata (``last_error``, see `ui.common.errors`) and
shown again when the conversation is opened, in the window's language, until a request
succeeds.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject

from engine import IMPORTED_SYSTEM_PROMPT, ContinuoError, ErrorAction, StorageError

from ..common.errors import (
    Kept,
    NoProviderError,
    action_of,
    describe_error,
    error_record,
    error_text,
    kept_of,
)
from .sessions import SESSION_ID_ROLE
from .transcript import TranscriptModel

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from engine import SQLiteSessionStorage

    from ..settings.model_catalog import ModelCatalog
    from .sessions import SessionListModel

__all__ = ["PAGE_SIZE", "Conversations", "ConversationsHost"]

log = logging.getLogger(__name__)

PAGE_SIZE = 60  # messages loaded per page of a conversation's history
_ABOVE_A_HIT = 5  # messages loaded above one opened from a search, for its context
_BELOW_A_HIT = 20  # and below it, when a page around it is shown
_FULL_OPEN = 3 * PAGE_SIZE  # a hit this near the end opens with every message below it


class ConversationsHost(Protocol):
    """What the open conversations need of the controller (`ui.controller.Controller` is one):
    the store now (a restore replaces it), the list, the language, the signals they are
    announced through, and the few things other parts do for them (the resume point, stopping
    a request, remembering the open conversation)."""

    @property
    def storage(self) -> SQLiteSessionStorage: ...

    @property
    def sessions(self) -> SessionListModel: ...

    @property
    def language(self) -> str: ...

    @property
    def currentChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def resumeChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def errorChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def busyChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def systemPromptChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def importedPromptChanged(self) -> SignalInstance: ...  # noqa: N802

    def is_running(self, session_id: str) -> bool: ...

    def providers(self) -> list[Any]: ...

    async def refresh_resume(self, sid: str) -> None: ...

    async def stop_and_wait(self, sid: str) -> None: ...

    async def remember_current(self, session_id: str) -> None: ...


class Conversations:
    """The conversations of one window (announced through its controller's signals).

    Args:
        host: the store, the list, the signals (see `ConversationsHost`).
        catalog: the models offered (a conversation opened chooses its own; a new one starts
            with the current choice).
        parent: the transcript models' parent.
    """

    def __init__(
        self, host: ConversationsHost, catalog: ModelCatalog, parent: QObject | None = None
    ) -> None:
        self._c = host
        self._catalog = catalog
        self._parent = parent
        self.current: str | None = None
        self._transcripts: dict[str, TranscriptModel] = {}
        self._metadata: dict[str, dict[str, Any]] = {}
        self._open_generation = 0

    def transcript(self, session_id: str) -> TranscriptModel:
        model = self._transcripts.get(session_id)
        if model is None:
            model = TranscriptModel(session_id, self._parent)
            self._transcripts[session_id] = model
        return model

    def metadata(self, sid: str) -> dict[str, Any]:
        """A conversation's metadata as last read or written."""
        return self._metadata.get(sid, {})

    async def update_metadata(self, sid: str, changes: dict[str, Any]) -> None:
        """Merge ``changes`` into the conversation's metadata (a key mapped to None goes).

        The copy here changes at once, before the write: a request sent, or another change
        made, while the write is on its way reads the new values. A failed write puts the
        copy back as it was.
        """
        before = self._metadata.get(sid)
        merged = {k: v for k, v in (before or {}).items() if changes.get(k, v) is not None}
        merged.update({k: v for k, v in changes.items() if v is not None})
        self._metadata[sid] = merged
        try:
            stored = await self._c.storage.update_metadata(sid, changes)
        except BaseException:
            if before is None:
                self._metadata.pop(sid, None)
            else:
                self._metadata[sid] = before
            raise
        if self._metadata.get(sid) is merged:  # no newer change meanwhile
            self._metadata[sid] = stored

    def forget_unless_shown(self, sid: str) -> None:
        """Drop the transcript of a conversation neither shown nor answering."""
        if not self._c.is_running(sid) and sid != self.current:
            self._transcripts.pop(sid, None)

    async def _last_page(self, sid: str, size: int = PAGE_SIZE) -> tuple[list[Any], bool]:
        """The latest page, ending in the answer a killed process was streaming (a draft,
        shown as the stopped answer it becomes when the lease is next taken, on the branch it
        settles on: a killed regenerate's new answer under its question)."""
        storage = self._c.storage
        draft = await storage.load_draft(sid)
        records = await storage.load_tail(sid, size + 1, None if draft is None else draft.seq)
        shown = list(records[-size:])
        return ([*shown, draft] if draft is not None else shown), len(records) > size

    async def open_at(self, session_id: str, seq: int) -> bool:
        """Show a conversation with message ``seq`` of its active path loaded, so it can be
        scrolled to: near the end, the pages from the end down to it; further up, one page
        around it (the later messages not loaded: ``newer``; a request shows the latest
        page first), so a hit thousands of messages up costs one page, not thousands of
        rows. False when the message is not on the active path (any more)."""
        depth = await self._c.storage.path_depth(session_id, seq)
        if depth is None:
            return False
        model = self._transcripts.get(session_id)
        loaded = (
            model is not None
            and model.first_seq is not None
            and model.first_seq <= seq <= (model.last_seq or 0)
        )
        running = self._c.is_running(session_id)
        if session_id != self.current or not loaded:
            if running or depth + _ABOVE_A_HIT <= _FULL_OPEN:
                await self.open(session_id, page=max(PAGE_SIZE, depth + _ABOVE_A_HIT))
            else:
                await self.open(session_id, around=depth)
        model = self.transcript(session_id)
        # A running conversation keeps its live rows: older pages are put in front instead.
        while self.current == session_id and model.has_more and (
            model.first_seq is None or model.first_seq > seq
        ):
            if not await self.load_older():
                break
        return self.current == session_id and model.first_seq is not None and model.first_seq <= seq

    async def _page_around(self, sid: str, depth: int) -> tuple[list[Any], bool]:
        """The page ending `_BELOW_A_HIT` messages below the one `depth` steps up the path."""
        storage = self._c.storage
        below = await storage.path_seq_at(sid, max(1, depth - _BELOW_A_HIT))
        if below is None:
            return await self._last_page(sid)
        # `below`'s ancestors: the hit is `_BELOW_A_HIT` rows from the page's end.
        records = list(await storage.load_tail(sid, PAGE_SIZE + 1, before_seq=below))
        return records[-PAGE_SIZE:], len(records) > PAGE_SIZE

    async def show_latest(self, sid: str) -> None:
        """Show the latest page of a conversation shown around a search hit (``newer``)."""
        records, has_more = await self._last_page(sid)
        model = self.transcript(sid)
        model.reset_records(records, has_more)
        await self.show_versions(sid)

    async def open(
        self, session_id: str, *, page: int = PAGE_SIZE, around: int | None = None
    ) -> None:
        """Show a conversation: its latest page (of ``page`` messages) or, with ``around``,
        the page around the message that many steps up its path; its system prompt, error
        and resume point."""
        c = self._c
        self._open_generation += 1
        generation = self._open_generation
        previous = self.current
        self.current = session_id
        if previous and previous != session_id and not c.is_running(previous):
            self._transcripts.pop(previous, None)
        model = self.transcript(session_id)
        unreadable: StorageError | None = None
        try:
            if not c.is_running(session_id):
                if around is None:
                    records, has_more = await self._last_page(session_id, page)
                else:
                    records, has_more = await self._page_around(session_id, around)
                if generation != self._open_generation:
                    return
                model.reset_records(records, has_more, newer=around is not None)
                await self.show_versions(session_id)
            info = await c.storage.get_session(session_id)
        except StorageError as exc:  # a damaged message or row: said, not a failed task
            log.warning("conversation %s could not be read: %s", session_id, exc)
            if generation != self._open_generation:
                return
            model.reset_records([], False)
            unreadable, info = exc, c.sessions.info(session_id)
        if generation != self._open_generation:
            return
        metadata = dict(info.metadata) if info is not None else {}
        self._metadata[session_id] = metadata
        c.currentChanged.emit(session_id, model)
        c.systemPromptChanged.emit(str(metadata.get("system_prompt") or ""))
        # A prompt that came with an import: shown, marked, not used until accepted.
        c.importedPromptChanged.emit(str(metadata.get(IMPORTED_SYSTEM_PROMPT) or ""))
        self._catalog.select_for(metadata)
        if unreadable is not None:
            message, action = describe_error(unreadable, c.language)
            c.errorChanged.emit(session_id, message, action, Kept.NONE)
            c.busyChanged.emit(session_id, c.is_running(session_id))
            c.resumeChanged.emit(session_id, None, "")
            return
        if info is not None and info.unreadable:  # the row is damaged, its messages are not
            c.errorChanged.emit(
                session_id, unreadable_text(info.unreadable), ErrorAction.NONE, Kept.NONE
            )
        elif not c.is_running(session_id):
            self.show_kept_error(session_id)
        else:
            c.errorChanged.emit(session_id, "", ErrorAction.NONE, Kept.NONE)
        c.busyChanged.emit(session_id, c.is_running(session_id))
        await c.refresh_resume(session_id)
        await c.remember_current(session_id)

    async def reread(self, sid: str) -> None:
        """Show what the store really kept of a conversation (after the window failed)."""
        if sid != self.current or self._c.is_running(sid):
            return
        records, has_more = await self._last_page(sid)
        self.transcript(sid).reset_records(records, has_more)
        await self.show_versions(sid)

    async def settle_stopped(self, sid: str) -> None:
        """Give the answer Stop just ended its stored id and line (`TranscriptModel.
        settle_stopped`): the engine stored it as the request was cancelled, so its event
        never reached the rows. The end of the path holds it (tool calls a Stop answered
        as not run come after it)."""
        model = self.transcript(sid)
        try:
            records = await self._c.storage.load_tail(sid, PAGE_SIZE)
        except StorageError as exc:  # the row stays as it is, without its actions
            log.warning("the stopped answer of %s not read back: %s", sid, exc)
            return
        if self._transcripts.get(sid) is model and model.settle_stopped(records):
            await self.show_versions(sid)

    async def load_older(self) -> int:
        """Put the page before the first shown message in front; return rows added."""
        sid = self.current
        if not sid:
            return 0
        model = self.transcript(sid)
        before = model.first_seq
        if not model.has_more or before is None:
            return 0
        records = await self._c.storage.load_tail(sid, PAGE_SIZE + 1, before_seq=before)
        # Another load (or a reopening) may have put rows in front meanwhile: this page
        # belongs in front of rows that are no longer first, so it is dropped.
        if self.current != sid or self._transcripts.get(sid) is not model:
            return 0
        if model.first_seq != before:
            return 0
        has_more = len(records) > PAGE_SIZE
        added = model.prepend_records(records[-PAGE_SIZE:], has_more)
        await self.show_versions(sid)
        return added

    async def show_versions(self, sid: str) -> None:
        """Mark the shown messages that have other versions ("‹ 2/3 ›"): one query."""
        model = self.transcript(sid)
        seqs = [i.seq for i in model.items() if i.seq is not None]
        if not seqs:
            return
        try:
            versions = await self._c.storage.versions(sid, seqs)
        except StorageError as exc:  # the rows stay as they are, without switchers
            log.warning("versions of %s not read: %s", sid, exc)
            return
        if self._transcripts.get(sid) is model:
            model.set_versions(versions)

    async def create(self) -> str:
        """Create an empty conversation (with the current model), show it, return its id."""
        c = self._c
        sid = uuid.uuid4().hex
        await c.storage.create_session(session_id=sid, metadata=self._catalog.metadata_for_new())
        await self.touch(sid)
        await self.open(sid)
        return sid

    async def touch(self, sid: str) -> None:
        """Read the conversation's entry again (title, time) and move it to the top."""
        info = await self._c.storage.get_session(sid)
        if info is not None:
            self._c.sessions.upsert(info)

    async def rename(self, session_id: str, title: str) -> None:
        c = self._c
        await c.storage.rename_session(session_id, title.strip() or None)
        info = await c.storage.get_session(session_id)
        if info is not None:
            c.sessions.upsert(info, move=False)

    async def delete(self, session_id: str) -> None:
        """Delete a conversation (stopping its request first) and show the next one."""
        c = self._c
        await c.stop_and_wait(session_id)
        row = c.sessions.row_of(session_id)
        await c.storage.delete_session(session_id)
        c.sessions.remove(session_id)
        self._transcripts.pop(session_id, None)
        if self.current == session_id:
            self.current = None
            count = c.sessions.rowCount()
            if count:
                index = c.sessions.index(min(max(row, 0), count - 1), 0)
                await self.open(c.sessions.data(index, SESSION_ID_ROLE))
            else:
                c.currentChanged.emit("", None)
                c.resumeChanged.emit("", None, "")
                c.errorChanged.emit("", "", ErrorAction.NONE, Kept.NONE)

    async def set_system_prompt(self, text: str) -> None:
        sid = self.current
        if not sid or str(self.metadata(sid).get("system_prompt") or "") == text:
            return
        await self.update_metadata(sid, {"system_prompt": text or None})

    async def settle_imported_prompt(self, *, accept: bool) -> None:
        """Accept the shown conversation's imported system prompt (it becomes the prompt
        every request is sent with) or discard it."""
        c = self._c
        sid = self.current
        if not sid:
            return
        imported = str(self.metadata(sid).get(IMPORTED_SYSTEM_PROMPT) or "")
        if not imported:
            return
        changes: dict[str, Any] = {IMPORTED_SYSTEM_PROMPT: None}
        if accept:
            changes["system_prompt"] = imported
        await self.update_metadata(sid, changes)
        if sid == self.current:
            if accept:
                c.systemPromptChanged.emit(imported)
            c.importedPromptChanged.emit("")

    async def set_error(self, sid: str, exc: BaseException | None, kept: Kept = Kept.NONE) -> None:
        """Keep (and announce) a request's failure, or clear the kept one (``exc`` None)."""
        c = self._c
        if exc is None:
            if self.metadata(sid).get("last_error"):
                await self.update_metadata(sid, {"last_error": None})
            c.errorChanged.emit(sid, "", ErrorAction.NONE, Kept.NONE)
            return
        record = error_record(exc, c.language, kept)
        try:
            await self.update_metadata(sid, {"last_error": record})
        except ContinuoError as store_error:
            log.warning("could not keep the error: %s", store_error)
            self._metadata.setdefault(sid, {})["last_error"] = record
        c.errorChanged.emit(sid, record["message"], action_of(record["action"]), kept)

    async def clear_error(self, sid: str) -> None:
        """A new request starts: the kept error was an earlier request's; forget it (a
        store that cannot forget it now is told at the request's end, if at all)."""
        try:
            await self.set_error(sid, None)
        except ContinuoError as exc:
            log.warning("could not clear the kept error: %s", exc)
            self._metadata.get(sid, {}).pop("last_error", None)
            self._c.errorChanged.emit(sid, "", ErrorAction.NONE, Kept.NONE)

    def kept_error(self, sid: str) -> dict[str, Any]:
        """The conversation's kept error record ({} when none, or when it said no provider
        was set up and one is now)."""
        record = self.metadata(sid).get("last_error") or {}
        if record.get("kind") == NoProviderError.__name__ and self._c.providers():
            return {}
        return dict(record)

    def show_kept_error(self, sid: str) -> None:
        """Announce the conversation's kept error (or none), in the current language."""
        record = self.kept_error(sid)
        kept = kept_of(record.get("kept"))
        self._c.errorChanged.emit(
            sid,
            error_text(record, self._c.language) if record else "",
            action_of(record.get("action")),
            # A message not stored was in the composer of the run that failed, not this one.
            Kept.NONE if kept is Kept.UNSENT else kept,
        )


def unreadable_text(reason: str) -> str:
    """What the window says about a conversation whose stored row is partly damaged."""
    return QCoreApplication.translate(
        "Controller",
        "Part of this conversation's record is damaged ({reason}). Its messages are shown "
        "as far as they could be read.",
    ).format(reason=reason)

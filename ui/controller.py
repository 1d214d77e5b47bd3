"""The one place the window talks to the engine: a facade that emits Qt signals.

The controller owns the conversation store (one `SQLiteSessionStorage`, shared by the
conversation list and every agent through one `SQLiteSessionExtension`) and the conversation
list model; it loads settings at start and closes everything at the end. Each other job lives
in its own module, found by name, and announces through the signals below:

- `ui.common.tasks.OwnedTasks` — every background task owned, named, its failure logged;
- `ui.conversation.conversations.Conversations` — the shown conversation, pages, metadata, kept errors;
- `ui.settings.model_catalog.ModelCatalog` — models offered, the one chosen, the built adapters;
- `ui.conversation.request_runner.RequestRunner` — one request's life (send, Resume, Stop, failures);
- `ui.conversation.resume_points.ResumePoints` — whether and how a conversation can carry on;
- `ui.tools.approvals.Approvals` — the person's answer before each MCP tool call;
- `ui.tools.tool_servers.ToolServers` — the MCP servers of ``mcp.json``, started when first needed;
- `ui.window.file_check.FileCheck` — the file's full check, after an unclean exit or when asked;
- `ui.common.errors` — what a failure says.

Each part is given only what it needs: a narrow host protocol the controller satisfies
(`ConversationsHost`, `RunnerHost`, `ResumeHost`, `ApprovalsHost`, `MarksHost`), the parts it
works with, and the signals it announces through; none holds the controller itself, so none
can reach the others through it (an import-linter contract keeps `ui.controller` out of them).
Reading the list again and replacing the store (`reload_list`, `replace_store`, for the
archive actions) are the controller's own work.

Widgets call its plain methods; it runs the work as owned tasks and reports back through
signals. Switching conversations does not touch a running request: its transcript model keeps
receiving events and is shown again when the person comes back.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from engine import (
    ErrorAction,
    SessionInfo,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
    StorageError,
    UserMessage,
    finish,
    switch_version,
    title_from,
)

from .common.errors import Kept, describe_error
from .common.tasks import OwnedTasks
from .conversation.conversations import PAGE_SIZE, Conversations
from .conversation.drafts import DRAFT_KEY
from .conversation.request_runner import RequestRunner
from .conversation.resume_points import ResumePoints
from .conversation.sessions import SESSION_ID_ROLE, SessionListModel
from .conversation.transcript import TranscriptModel
from .settings.model_catalog import ModelCatalog, ModelChoice, ModelFactory, threaded_builder
from .tools.approvals import Approvals
from .tools.tool_servers import OFF_KEY, ToolServers, offered_servers
from .window.file_check import FileCheck

__all__ = ["DB_FILE_NAME", "PAGE_SIZE", "Controller", "ModelChoice"]

log = logging.getLogger(__name__)

DB_FILE_NAME = "continuo.sqlite3"


class Controller(QObject):
    """The window's one entry to conversations, models and requests (see the module docstring)."""

    # a conversation is now shown: (session id or "", its transcript model or None)
    currentChanged = Signal(str, object)  # noqa: N815
    # (session id, ResumePoint or None, text when the lease is held elsewhere, else "")
    resumeChanged = Signal(str, object, str)  # noqa: N815
    # (session id, message, what helps: `ui.common.errors.AnyAction`, what was kept of a cut-off
    # answer: `ui.common.errors.Kept`) — message "" clears the banner
    errorChanged = Signal(str, str, object, object)  # noqa: N815
    busyChanged = Signal(str, bool)  # noqa: N815
    # the model picker's entries changed: (list[ModelChoice], the current choice or None)
    modelsChanged = Signal(object, object)  # noqa: N815
    # the current conversation's system prompt (after opening it)
    systemPromptChanged = Signal(str)  # noqa: N815
    # the system prompt the current conversation was imported with, waiting for the person
    # to accept it (not used until then); "" when none waits
    importedPromptChanged = Signal(str)  # noqa: N815
    # settings loaded or changed: (Settings)
    settingsLoaded = Signal(object)  # noqa: N815
    # a start-up or storage problem the person must see (plain words)
    problem = Signal(str)
    # the person's message is stored: (session id, its text) — it may leave the composer
    messageStored = Signal(str, str)  # noqa: N815
    # (session id, `RetryInfo` or None): the provider is being tried again / no longer
    retryChanged = Signal(str, object)  # noqa: N815
    # the conversation file cannot be used: (message, what helps: `ui.common.errors.AnyAction`, path,
    # at start-up); message "" says it works again. At start-up nothing could be listed: the
    # window shows a page.
    storageFailed = Signal(str, object, str, bool)  # noqa: N815
    # a message given to `send`: (its text, whether it was stored). Until it is stored
    # the composer keeps it; one that was not stored (a full disk) stays there.
    inputStored = Signal(str, bool)  # noqa: N815
    # opening the file runs a long migration (the search index of an older file): the
    # fraction done, 0..1; emitted from the migrating thread, delivered on the GUI thread
    migrationProgress = Signal(float)  # noqa: N815
    # opening the file put back paths a killed process had left cut short (an older
    # version's edit): the engine's `MendedPath`s, told once, in the status bar
    pathsMended = Signal(object)  # noqa: N815

    ready = True  # the window's `ControllerPlaceholder` says False

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        settings_store: Any = None,
        model_factory: ModelFactory | None = None,
        tools: Sequence[Any] = (),
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.data_dir = Path(data_dir)
        self.storage = SQLiteSessionStorage(self.data_dir / DB_FILE_NAME)
        self.storage.on_migration_progress = self.migrationProgress.emit
        self.extension = SQLiteSessionExtension(self.storage)
        self.sessions = SessionListModel(self)
        self.settings_store = settings_store
        self.tools = list(tools)
        # extensions every agent gets after the store's (`RequestRunner` appends them)
        self.tool_extensions: list[Any] = []
        # the language of the engine's sentences ("en", "zh_CN"): the window's (`set_language`)
        self.language = "en"
        self.started = asyncio.Event()
        self._closed = False
        # the store's failure the window shows (and says again in another language), and
        # whether it happened at start-up, when nothing could be listed
        self._storage_failure: tuple[StorageError, bool] | None = None
        self._check_failure: StorageError | None = None  # the damage the file's check found
        build = model_factory
        if build is None and settings_store is not None:
            build = threaded_builder(settings_store)
        self.catalog = ModelCatalog(build, self.modelsChanged.emit)
        self.tasks = OwnedTasks("controller", self._task_failed, self._task_done)
        # Each part is given only what it needs (its host protocol, the parts it works with,
        # the signals it announces through): none reaches the others through this facade.
        self.conversations = Conversations(self, self.catalog, self)
        self.resume_points = ResumePoints(self, self.transcript, self.resumeChanged.emit)
        self.approvals = Approvals(self, self)  # asks the person before each MCP tool call
        self.tool_extensions.append(self.approvals)
        self.tool_servers = ToolServers(self.data_dir, self.spawn, self.problem.emit, self)
        self.requests = RequestRunner(
            self, self.conversations, self.catalog, self.tool_servers, self.approvals.offer
        )
        self.file_check = FileCheck(lambda: self.storage, self)
        self.file_check.finished.connect(self._file_checked)

    # ------------------------------------------------------------------ tasks

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        """Run ``coro`` as a task this controller owns; its failure is logged, not lost."""
        return self.tasks.spawn(coro, name)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.requests.task_done(task)

    def _task_failed(self, exc: BaseException) -> None:
        if isinstance(exc, StorageError):  # the store refused: a notice that stays
            self.storage_failed(exc)
            return
        self.problem.emit(describe_error(exc, self.language)[0])

    def storage_failed(self, exc: StorageError | None, *, at_start: bool = False) -> None:
        """Show (or, with None, clear) a failure of the conversation file until it works."""
        if exc is None:
            if self._storage_failure is not None:
                self._storage_failure = None
                self.storageFailed.emit("", ErrorAction.NONE, "", False)
            return
        if self._storage_failure is not None and self._storage_failure[1]:
            at_start = True  # still nothing listed: the page stays a page
        self._storage_failure = (exc, at_start)
        message, action = describe_error(exc, self.language)
        path = str(getattr(exc, "path", "") or self.storage.path)
        self.storageFailed.emit(message, action, path, at_start)

    # ------------------------------------------------------------------ state

    @property
    def current(self) -> str | None:
        """The shown conversation's id (None: none)."""
        return self.conversations.current

    @property
    def settings(self) -> Any:
        """The loaded settings (None until `start`)."""
        return self.catalog.settings

    @settings.setter
    def settings(self, value: Any) -> None:
        self.catalog.settings = value

    @property
    def closed(self) -> bool:
        return self._closed

    def is_running(self, session_id: str) -> bool:
        return self.requests.is_running(session_id)

    async def stop_and_wait(self, session_id: str) -> None:
        """Stop a conversation's request and wait until it has stored what it had."""
        await self.requests.stop_and_wait(session_id)

    def transcript(self, session_id: str) -> TranscriptModel:
        return self.conversations.transcript(session_id)

    def session_info(self, session_id: str) -> SessionInfo | None:
        """A listed conversation's entry (title, times, metadata), or None."""
        return self.sessions.info(session_id)

    def find_tool(self, name: str) -> Any:
        """The tool the agent knows by ``name`` (a `Tool`: the app's or an MCP server's), or
        None."""
        own = next((t for t in self.tools if getattr(t, "name", None) == name), None)
        return own if own is not None else self.tool_servers.find_tool(name)

    def offered_servers(self, session_id: str) -> list[str]:
        """The MCP servers whose tools the conversation is offered."""
        metadata = self.conversations.metadata(session_id)
        return offered_servers(self.tool_servers.names(), metadata)

    async def offer_server(self, session_id: str, server: str, offered: bool) -> None:
        """Offer (or stop offering) a server's tools in one conversation (kept in its
        metadata, from its next request on)."""
        off = self.conversations.metadata(session_id).get(OFF_KEY)
        names = [n for n in off if isinstance(n, str)] if isinstance(off, list) else []
        names = [n for n in names if n != server] + ([] if offered else [server])
        await self.conversations.update_metadata(session_id, {OFF_KEY: names})

    def providers(self) -> list[Any]:
        return self.catalog.providers()

    # ------------------------------------------------------------------ start and close

    async def start(self) -> None:
        """Load settings and the conversation list, and open the remembered conversation."""
        # Read only: the servers start when a request first needs their tools. Started
        # first, so that a request sent while the list loads waits for it.
        self.tool_servers.start_reading()
        try:
            if self.settings_store is not None:
                try:
                    self.settings = await self.settings_store.load(detect_keychain=False)
                except Exception as exc:  # a refused settings file: start with defaults
                    log.warning("settings not loaded: %s", exc)
                    self.problem.emit(str(exc))
                    from .settings.store import Settings

                    self.settings = Settings()
                self.settingsLoaded.emit(self.settings)
            try:
                sessions = await self.storage.list_sessions()
            except StorageError as exc:  # damaged, newer, read-only, forbidden: said until fixed
                log.warning("the conversation file cannot be used: %s", exc)
                self.storage_failed(exc, at_start=True)
                sessions = None
            else:
                self.storage_failed(None)
                mended = await self.storage.mended()
                if mended:
                    self.pathsMended.emit(list(mended))
            self.sessions.set_sessions(sessions or [])
            last = getattr(self.settings, "last_session_id", None)
            if last and self.sessions.row_of(last) >= 0:
                await self.open_session(last)
            elif sessions:
                await self.open_session(sessions[0].id)
            else:
                self.currentChanged.emit("", None)
            self.spawn(self.refresh_models(), "list models")
        finally:
            self.started.set()

    def check_file(self) -> None:
        """Read every page of the conversation file, in the background (Help menu)."""
        self.spawn(self.file_check.run(asked=True), "check the conversation file")

    def _file_checked(self, _asked: bool, damage: StorageError | None) -> None:
        """Show the damage a check found; once a check passes, take away the notice a check
        put up (any other failure is cleared by what failed)."""
        shown = self._storage_failure[0] if self._storage_failure is not None else None
        if damage is not None:
            self._check_failure = damage
            self.storage_failed(damage)
            return
        if shown is not None and shown is self._check_failure:
            self.storage_failed(None)
        self._check_failure = None

    async def retry_storage(self) -> None:
        """Try the conversation file again (Try again): list it, or write to it, once more."""
        failure = self._storage_failure
        if failure is None:
            return
        if failure[0] is self._check_failure:  # damage the check found: check once more
            await self.file_check.run(asked=True)
            return
        if failure[1]:
            self.started.clear()
            await self.start()
            return
        try:  # the file reads again; a write that still fails says so again when it does
            await self.storage.list_sessions()
        except StorageError as exc:
            self.storage_failed(exc)
            return
        self.storage_failed(None)

    async def close(self) -> None:
        """Stop every request (their partial answers are stored), then close the store.

        The store closes even when closing is itself cancelled (the loop shutting down under
        it): an open connection's thread would keep the process from ever exiting. The
        cancellation is raised once everything is closed.
        """
        if self._closed:
            return
        self._closed = True
        self.requests.stop_all()
        try:
            # Requests store their partial answers as they are cancelled; other work (listing
            # models, opening a conversation) gets a moment to finish, then is dropped.
            await self.tasks.finish()
        finally:
            await finish(self._release())

    async def _release(self) -> None:
        """Close the MCP servers, the adapters, the extension and the store, each whatever the
        others did."""
        try:
            try:
                await self.tool_servers.close()
            finally:
                await self.catalog.close_adapters(held_too=True)
        finally:
            try:
                await self.extension.close()
            finally:
                await self.storage.close()

    async def reload_list(self, *, reopen: bool) -> None:
        """Read the conversation list from the store again (an import added to it, a restore
        replaced it); with ``reopen``, show the open conversation from it too (the first one
        when it is gone)."""
        from .conversation import resume_marks

        try:
            sessions = await self.storage.list_sessions()
        except StorageError as exc:
            if not reopen:  # the list stays as it was; the failure is said until it works
                self.storage_failed(exc)
                return
            self.storage_failed(exc, at_start=True)  # the restored file cannot be used: a page
            sessions = []
        else:
            self.storage_failed(None)
        self.sessions.set_sessions(sessions)
        self.spawn(resume_marks.scan(self), "resume marks")
        if not reopen:
            return
        previous = self.current
        ids = [s.id for s in sessions]
        target = previous if previous in ids else (ids[0] if ids else None)
        if target is not None:
            await self.open_session(target)
        else:
            self.conversations.current = None
            self.currentChanged.emit("", None)
            self.resumeChanged.emit("", None, "")
            self.errorChanged.emit("", "", ErrorAction.NONE, Kept.NONE)
        if previous and previous != target:
            self.conversations.forget_unless_shown(previous)

    async def replace_store(self, replace: Callable[[], Path | None]) -> Path | None:
        """Stop the requests (their partial answers stored), close the store, run the blocking
        ``replace`` in a worker thread to its end, open the store again whatever happened and
        read the list again (`reload_list`); return what ``replace`` returned, or raise its
        error.

        The store is opened again whatever happened, even when the window is closing (its
        close then closes the new store): a replacement that began always finishes.
        """
        running = [t for t in self.requests.running.values() if not t.done()]
        self.requests.stop_all()  # each stored what had arrived of its answer
        if running:
            await asyncio.wait(running)
        old = self.storage
        error: BaseException | None = None
        aside: Path | None = None
        try:
            try:
                await self.extension.close()  # its leases; the store is this controller's
            finally:
                await old.close()
            try:
                # A replacement that began runs to its end; cancelled (the window closing),
                # its outcome is not waited for, so the cancellation is what is raised.
                aside = await finish(asyncio.to_thread(replace), discard_on_cancel=True)
            except Exception as exc:  # said by the caller, after the store is open again
                error = exc
        finally:
            storage = SQLiteSessionStorage(
                old.path,
                synchronous=old.synchronous,
                lease_stale_after=old.lease_stale_after,
                heartbeat_interval=old.heartbeat_interval,
                lease_host=old.lease_host,
            )
            storage.on_migration_progress = old.on_migration_progress
            self.storage = storage
            self.extension = SQLiteSessionExtension(storage)
        await self.reload_list(reopen=True)
        if error is not None:
            raise error
        return aside

    # ------------------------------------------------------------------ settings

    async def remember_current(self, session_id: str) -> None:
        """Keep the open conversation in the settings, to reopen it at the next start."""
        store, settings = self.settings_store, self.settings
        if store is None or settings is None or settings.last_session_id == session_id:
            return
        settings.last_session_id = session_id
        try:
            await store.save(settings)
        except Exception as exc:  # not remembering is a nuisance, not a failure
            log.warning("could not remember the open conversation: %s", exc)

    async def save_settings(self) -> None:
        if self.settings_store is not None and self.settings is not None:
            await self.settings_store.save(self.settings)

    async def reload_settings(self) -> None:
        """The settings changed (the dialog saved): drop built adapters (one a request holds
        closes when that request ends) and list models again. A "no provider" error is over
        once there is one."""
        if self.settings_store is None:
            return
        if not self._closed:
            # The Tools page may have changed mcp.json: read it beside the models' listing,
            # not after it (a slow provider would hold the servers' change back).
            self.spawn(self.tool_servers.reload(), "read mcp.json")
        async with self.catalog.lock:
            self.settings = await self.settings_store.load()
            self.settingsLoaded.emit(self.settings)
            await self.catalog.close_adapters()
            await self.catalog.list_models(self.conversations.metadata(self.current or ""))
        sid = self.current
        if sid and not self.is_running(sid) and not self._closed:
            self.conversations.show_kept_error(sid)

    def set_language(self, language: str) -> None:
        """Speak ``language`` ("en", "zh_CN") from now on; say the current error and resume
        point again in it."""
        if language == self.language:
            return
        self.language = language
        if self._storage_failure is not None:
            self.storage_failed(*self._storage_failure[:1], at_start=self._storage_failure[1])
        sid = self.current
        if sid and not self.is_running(sid) and not self._closed:
            self.conversations.show_kept_error(sid)
            self.spawn(self.refresh_resume(sid), "resume point")

    # ------------------------------------------------------------------ models

    async def refresh_models(self) -> None:
        """Ask every configured provider for its models (concurrently) and fill the picker."""
        async with self.catalog.lock:
            await self.catalog.list_models(self.conversations.metadata(self.current or ""))

    async def choose_model(self, choice: ModelChoice) -> None:
        """The person picked a model for the shown conversation (kept in its metadata; new
        conversations start with the default one), or, with none shown, for the next new one."""
        self.catalog.choice = choice
        sid = self.current
        self.catalog.unsaved = None if sid else choice
        if sid:
            await self.conversations.update_metadata(
                sid, {"provider_id": choice.provider_id, "model": choice.model}
            )

    # ------------------------------------------------------------------ conversations

    async def open_session(self, session_id: str) -> None:
        await self.conversations.open(session_id)

    async def load_older(self) -> int:
        return await self.conversations.load_older()

    async def new_session(self) -> str:
        return await self.conversations.create()

    async def open_empty(self) -> None:
        """Open an empty conversation: the open or the newest one if it has no message yet
        (repeated Ctrl+N does not pile up empty "New conversation" rows), else a new one."""
        candidates = [self.current or ""]
        if self.sessions.rowCount():
            candidates.append(self.sessions.data(self.sessions.index(0, 0), SESSION_ID_ROLE))
        for sid in candidates:
            if sid and not self.is_running(sid) and not await self.storage.load_tail(sid, 1):
                if sid != self.current:
                    await self.open_session(sid)
                return
        await self.new_session()

    async def rename_session(self, session_id: str, title: str) -> None:
        await self.conversations.rename(session_id, title)

    async def delete_session(self, session_id: str) -> None:
        await self.conversations.delete(session_id)

    async def set_system_prompt(self, text: str) -> None:
        await self.conversations.set_system_prompt(text)

    async def accept_imported_prompt(self) -> None:
        """Make the shown conversation's imported system prompt its own (used from now on)."""
        await self.conversations.settle_imported_prompt(accept=True)

    async def discard_imported_prompt(self) -> None:
        """Drop the shown conversation's imported system prompt, unused."""
        await self.conversations.settle_imported_prompt(accept=False)

    async def refresh_resume(self, sid: str) -> None:
        await self.resume_points.refresh(sid)

    # ------------------------------------------------------------------ requests

    def send(self, text: str) -> asyncio.Task[Any] | None:
        """Send a message in the current conversation (a new one if none is open)."""
        text = text.strip()
        return self.requests.send(self.current, text) if text else None

    def resume(self) -> asyncio.Task[Any] | None:
        """Carry on from where the current conversation stopped."""
        sid = self.current
        return self.requests.resume(sid) if sid else None

    # ------------------------------------------------------------------ versions

    def regenerate(self, message_id: str) -> asyncio.Task[Any] | None:
        """Write another answer in place of the answer ``message_id`` (it stays a version)."""
        sid = self.current
        return self.requests.regenerate(sid, message_id) if sid else None

    def edit(self, message_id: str, text: str) -> asyncio.Task[Any] | None:
        """Send ``text`` as a new version of the person's message ``message_id``."""
        sid, text = self.current, text.strip()
        return self.requests.edit(sid, message_id, text) if sid and text else None

    async def switch_version(self, message_id: str, step: int) -> bool:
        """Show the version ``step`` places beside ``message_id`` (-1: the previous one) and
        the newest path under it. False when there is none, or a request is running."""
        sid = self.current
        if not sid or self.is_running(sid):
            return False
        siblings = await self.storage.siblings(sid, message_id)
        index = siblings.index(message_id) + step if message_id in siblings else -1
        if not 0 <= index < len(siblings):
            return False
        return await self._switch_to(sid, siblings[index])

    async def _switch_to(self, sid: str, message_id: str) -> bool:
        """Make the newest path through ``message_id`` the conversation's active path."""
        if self.is_running(sid):
            return False
        # Busy while it writes: Send waits, as for a request (the engine takes the lease).
        with self.requests.busy(sid):
            await switch_version(self.extension, sid, message_id)
        await self.conversations.reread(sid)
        await self.resume_points.refresh(sid)
        return True

    async def show_message(self, sid: str, message_id: str, seq: int, on_path: bool) -> bool:
        """Open conversation ``sid`` with message ``seq`` loaded (a search hit), switching to
        its version first when it is on a branch not shown. False when it cannot be shown
        (the conversation is answering and the message is on another branch, or it is gone)."""
        if not on_path:
            if self.is_running(sid):
                return False
            if sid != self.current:
                await self.open_session(sid)
            if not await self._switch_to(sid, message_id):
                return False
        return await self.conversations.open_at(sid, seq)

    async def branch_into_new_chat(self, message_id: str) -> str | None:
        """A new conversation holding this one up to ``message_id``, opened; its id."""
        sid = self.current
        if not sid:
            return None
        base = await self._branch_base_title(sid, message_id)
        title = self.tr("{title} (branch)").format(title=base) if base else None
        # A dead process's answer becomes a message first, so the copy holds it.
        new_id = await self.extension.fork(sid, message_id, title=title)
        # The copy takes the settings, not the unsent text of the conversation it came from.
        await self.storage.update_metadata(new_id, {DRAFT_KEY: None})
        await self.conversations.touch(new_id)
        await self.open_session(new_id)
        return new_id

    async def _branch_base_title(self, sid: str, message_id: str) -> str:
        """What a branch up to ``message_id`` is named after: the conversation's title when
        the person gave it (a rename) or when it is its first question's; the branch's own
        first question when the title came from another version of it (the question was
        edited: "Explain quokka habits (branch)" named a chat with no quokka in it)."""
        info = await self.storage.get_session(sid)
        title = (info.title if info is not None else None) or ""
        path = await self.storage.load(sid, leaf=message_id)
        first = next((m for m in path if isinstance(m, UserMessage)), None)
        own = title_from(first) if first is not None else None
        if not own or own == title:
            return title or own or ""
        if not title:
            return own
        versions = await self.storage.siblings(sid, first.id) if first is not None else []
        if len(versions) < 2:
            return title  # one first question, and another title: the person's own name
        for version in await self._messages(sid, versions):
            if isinstance(version, UserMessage) and title_from(version) == title:
                return own  # the title is another version's first question
        return title

    async def _messages(self, sid: str, message_ids: Sequence[str]) -> list[Any]:
        """The messages ``message_ids`` (each the leaf of its own path: its last message)."""
        found = []
        for mid in message_ids:
            path = await self.storage.load(sid, leaf=mid)
            if path:
                found.append(path[-1])
        return found

    def stop(self, session_id: str | None = None) -> bool:
        """Cancel the request of a conversation (the current one by default)."""
        return self.requests.stop(session_id or self.current or "")

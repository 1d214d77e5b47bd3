"""The one place the window talks to the engine: a facade that emits Qt signals.

The controller owns the conversation store (one `SQLiteSessionStorage`, shared by the
conversation list and every agent through one `SQLiteSessionExtension`), the conversation list
model and one `TranscriptModel` per conversation that is open or still answering; it opens,
pages, renames and deletes conversations and reads their resume points. The other jobs live
in their own modules, found by name:

- `ui.tasks.OwnedTasks` — every background task owned, named, its failure logged;
- `ui.model_catalog.ModelCatalog` — models offered, the one chosen, the built adapters;
- `ui.request_runner.RequestRunner` — one request's life (send, Resume, Stop, failures);
- `ui.errors` — what a failure says, and the ``last_error`` a conversation keeps.

A failed request's error is kept in the conversation's metadata (``last_error``) and shown
until a request succeeds. Switching conversations does not touch a running request: its
transcript model keeps receiving events and is shown again when the person comes back.
Whenever a conversation opens, and after every request, the resume point is read again
(`refresh_resume`): a lease held by another process means "open in another window" instead.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal

from engine import (
    Agent,
    AgentRunConfig,
    ContinuoError,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
)

from .errors import KEPT_LOST, KEPT_SAVED, describe_error, error_record, error_text
from .model_catalog import ModelCatalog, ModelChoice, ModelFactory, threaded_builder
from .models.sessions import SESSION_ID_ROLE, SessionListModel
from .models.transcript import TranscriptModel
from .request_runner import RequestRunner
from .tasks import OwnedTasks

__all__ = [
    "DB_FILE_NAME",
    "KEPT_LOST",
    "KEPT_SAVED",
    "PAGE_SIZE",
    "Controller",
    "ModelChoice",
    "describe_error",
    "error_text",
]

log = logging.getLogger(__name__)

DB_FILE_NAME = "continuo.sqlite3"
PAGE_SIZE = 60  #: messages loaded per page of a conversation's history


class Controller(QObject):
    """Conversations, requests and resume points for one window (see the module docstring)."""

    #: a conversation is now shown: (session id or "", its transcript model or None)
    currentChanged = Signal(str, object)  # noqa: N815
    #: (session id, ResumePoint or None, text when the lease is held elsewhere, else "")
    resumeChanged = Signal(str, object, str)  # noqa: N815
    #: (session id, message, action, kept) — message "" clears the banner; kept is
    #: `KEPT_SAVED`, `KEPT_LOST` or "" (nothing of an answer was cut off)
    errorChanged = Signal(str, str, str, str)  # noqa: N815
    busyChanged = Signal(str, bool)  # noqa: N815
    #: the model picker's entries changed: (list[ModelChoice], the current choice or None)
    modelsChanged = Signal(object, object)  # noqa: N815
    #: the current conversation's system prompt (after opening it)
    systemPromptChanged = Signal(str)  # noqa: N815
    #: settings loaded or changed: (Settings)
    settingsLoaded = Signal(object)  # noqa: N815
    #: a start-up or storage problem the person must see (plain words)
    problem = Signal(str)

    ready = True  #: the window's `ControllerPlaceholder` says False

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
        self.extension = SQLiteSessionExtension(self.storage)
        self.sessions = SessionListModel(self)
        self.settings_store = settings_store
        self.tools = list(tools)
        self.tasks = OwnedTasks("controller", self._task_failed, self._task_done)
        self.requests = RequestRunner(self)
        self._transcripts: dict[str, TranscriptModel] = {}
        build = model_factory
        if build is None and settings_store is not None:
            build = threaded_builder(settings_store)
        self.catalog = ModelCatalog(build, self.modelsChanged.emit)
        self._metadata: dict[str, dict[str, Any]] = {}
        self._open_generation = 0
        self.current: str | None = None
        #: the language of the engine's sentences ("en", "zh_CN"): the window's (`set_language`)
        self.language = "en"
        self.started = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------------ tasks

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        """Run ``coro`` as a task this controller owns; its failure is logged, not lost."""
        return self.tasks.spawn(coro, name)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.requests.task_done(task)

    def _task_failed(self, exc: BaseException) -> None:
        self.problem.emit(describe_error(exc, self.language)[0])

    def is_running(self, session_id: str) -> bool:
        return self.requests.is_running(session_id)

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

    def metadata(self, sid: str) -> dict[str, Any]:
        """A conversation's metadata as last read or written."""
        return self._metadata.get(sid, {})

    # ------------------------------------------------------------------ start and close

    async def start(self) -> None:
        """Load settings and the conversation list, and open the remembered conversation."""
        try:
            if self.settings_store is not None:
                try:
                    self.settings = await self.settings_store.load(detect_keychain=False)
                except Exception as exc:  # a refused settings file: start with defaults
                    log.warning("settings not loaded: %s", exc)
                    self.problem.emit(str(exc))
                    from .settings import Settings

                    self.settings = Settings()
                self.settingsLoaded.emit(self.settings)
            try:
                sessions = await self.storage.list_sessions()
            except ContinuoError as exc:
                self.problem.emit(str(exc))
                sessions = []
            self.sessions.set_sessions(sessions)
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

    async def close(self) -> None:
        """Stop every request (their partial answers are stored), then close the store."""
        if self._closed:
            return
        self._closed = True
        self.requests.stop_all()
        # Requests store their partial answers as they are cancelled; other work (listing
        # models, opening a conversation) gets a moment to finish, then is dropped.
        await self.tasks.finish()
        await self.catalog.close_adapters()
        await self.extension.close()
        await self.storage.close()

    # ------------------------------------------------------------------ conversations

    def transcript(self, session_id: str) -> TranscriptModel:
        model = self._transcripts.get(session_id)
        if model is None:
            model = TranscriptModel(session_id, self)
            self._transcripts[session_id] = model
        return model

    async def open_session(self, session_id: str) -> None:
        """Show a conversation: its latest page (ending in the answer a killed process was
        streaming, if any), its system prompt, error and resume point."""
        self._open_generation += 1
        generation = self._open_generation
        previous = self.current
        self.current = session_id
        if previous and previous != session_id and previous not in self.requests.running:
            self._transcripts.pop(previous, None)
        model = self.transcript(session_id)
        if session_id not in self.requests.running:
            records = await self.storage.load_tail(session_id, PAGE_SIZE + 1)
            # What a process that died mid-answer had streamed: shown as the stopped answer
            # it becomes when the conversation's lease is next taken (DESIGN.md, drafts).
            draft = await self.storage.load_draft(session_id)
            if generation != self._open_generation:
                return
            has_more = len(records) > PAGE_SIZE
            shown = records[-PAGE_SIZE:]
            model.reset_records([*shown, draft] if draft is not None else shown, has_more)
        info = await self.storage.get_session(session_id)
        if generation != self._open_generation:
            return
        metadata = dict(info.metadata) if info is not None else {}
        self._metadata[session_id] = metadata
        self.currentChanged.emit(session_id, model)
        self.systemPromptChanged.emit(str(metadata.get("system_prompt") or ""))
        self.catalog.select_for(metadata)
        if session_id not in self.requests.running:
            self._show_kept_error(session_id)
        else:
            self.errorChanged.emit(session_id, "", "", "")
        self.busyChanged.emit(session_id, session_id in self.requests.running)
        await self.refresh_resume(session_id)
        await self._remember_current(session_id)

    async def load_older(self) -> int:
        """Put the page before the first shown message in front; return rows added."""
        sid = self.current
        if not sid:
            return 0
        model = self.transcript(sid)
        before = model.first_seq
        if not model.has_more or before is None:
            return 0
        records = await self.storage.load_tail(sid, PAGE_SIZE + 1, before_seq=before)
        # Another load (or a reopening) may have put rows in front meanwhile: this page
        # belongs in front of rows that are no longer first, so it is dropped.
        if self.current != sid or self._transcripts.get(sid) is not model:
            return 0
        if model.first_seq != before:
            return 0
        has_more = len(records) > PAGE_SIZE
        return model.prepend_records(records[-PAGE_SIZE:], has_more)

    async def new_session(self) -> str:
        """Create an empty conversation, show it and return its id."""
        sid = uuid.uuid4().hex
        metadata = self.catalog.metadata_for_new()
        await self.storage.create_session(session_id=sid, metadata=metadata)
        info = await self.storage.get_session(sid)
        if info is not None:
            self.sessions.upsert(info)
        await self.open_session(sid)
        return sid

    async def rename_session(self, session_id: str, title: str) -> None:
        await self.storage.rename_session(session_id, title.strip() or None)
        info = await self.storage.get_session(session_id)
        if info is not None:
            self.sessions.upsert(info, move=False)

    async def delete_session(self, session_id: str) -> None:
        """Delete a conversation (stopping its request first) and show the next one."""
        await self.requests.stop_and_wait(session_id)
        row = self.sessions.row_of(session_id)
        await self.storage.delete_session(session_id)
        self.sessions.remove(session_id)
        self._transcripts.pop(session_id, None)
        if self.current == session_id:
            self.current = None
            count = self.sessions.rowCount()
            if count:
                index = self.sessions.index(min(max(row, 0), count - 1), 0)
                await self.open_session(self.sessions.data(index, SESSION_ID_ROLE))
            else:
                self.currentChanged.emit("", None)
                self.resumeChanged.emit("", None, "")
                self.errorChanged.emit("", "", "", "")

    async def set_system_prompt(self, text: str) -> None:
        sid = self.current
        if not sid:
            return
        if str(self._metadata.get(sid, {}).get("system_prompt") or "") == text:
            return
        self._metadata[sid] = await self.storage.update_metadata(
            sid, {"system_prompt": text or None}
        )

    async def _remember_current(self, session_id: str) -> None:
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

    # ------------------------------------------------------------------ models

    async def reload_settings(self) -> None:
        """The settings changed (the dialog saved): drop built adapters and list models again."""
        if self.settings_store is None:
            return
        async with self.catalog.lock:
            self.settings = await self.settings_store.load()
            self.settingsLoaded.emit(self.settings)
            await self.catalog.close_adapters()
            await self.catalog.list_models(self.metadata(self.current or ""))

    def providers(self) -> list[Any]:
        return self.catalog.providers()

    async def refresh_models(self) -> None:
        """Ask every configured provider for its models (concurrently) and fill the picker."""
        async with self.catalog.lock:
            await self.catalog.list_models(self.metadata(self.current or ""))

    async def choose_model(self, choice: ModelChoice) -> None:
        """The person picked a model: use it from now on, and for this conversation."""
        self.catalog.choice = choice
        sid = self.current
        if sid:
            self._metadata[sid] = await self.storage.update_metadata(
                sid, {"provider_id": choice.provider_id, "model": choice.model}
            )

    # ------------------------------------------------------------------ requests

    def send(self, text: str) -> asyncio.Task[Any] | None:
        """Send a message in the current conversation (a new one if none is open)."""
        text = text.strip()
        if not text:
            return None
        return self.requests.send(self.current, text)

    def resume(self) -> asyncio.Task[Any] | None:
        """Carry on from where the current conversation stopped."""
        sid = self.current
        return self.requests.resume(sid) if sid else None

    def stop(self, session_id: str | None = None) -> bool:
        """Cancel the request of a conversation (the current one by default)."""
        return self.requests.stop(session_id or self.current or "")

    def forget_unless_shown(self, sid: str) -> None:
        """Drop the transcript of a conversation neither shown nor answering."""
        if not self.is_running(sid) and sid != self.current:
            self._transcripts.pop(sid, None)

    async def reread(self, sid: str) -> None:
        """Show what the store really kept of a conversation (after the window failed)."""
        if sid != self.current or self.is_running(sid):
            return
        records = await self.storage.load_tail(sid, PAGE_SIZE + 1)
        draft = await self.storage.load_draft(sid)
        shown = records[-PAGE_SIZE:]
        self.transcript(sid).reset_records(
            [*shown, draft] if draft is not None else shown, len(records) > PAGE_SIZE
        )

    async def touch(self, sid: str) -> None:
        info = await self.storage.get_session(sid)
        if info is not None:
            self.sessions.upsert(info)

    async def set_error(self, sid: str, exc: BaseException | None, kept: str = "") -> None:
        if exc is None:
            if self._metadata.get(sid, {}).get("last_error"):
                self._metadata[sid] = await self.storage.update_metadata(sid, {"last_error": None})
            self.errorChanged.emit(sid, "", "", "")
            return
        record = error_record(exc, self.language, kept)
        try:
            self._metadata[sid] = await self.storage.update_metadata(sid, {"last_error": record})
        except ContinuoError as store_error:
            log.warning("could not keep the error: %s", store_error)
            self._metadata.setdefault(sid, {})["last_error"] = record
        self.errorChanged.emit(sid, record["message"], record["action"], kept)

    def _show_kept_error(self, sid: str) -> None:
        """Announce the conversation's kept error (or none), in the current language."""
        record = self._metadata.get(sid, {}).get("last_error") or {}
        self.errorChanged.emit(
            sid,
            error_text(record, self.language) if record else "",
            str(record.get("action", "")),
            str(record.get("kept", "")),
        )

    def set_language(self, language: str) -> None:
        """Speak ``language`` ("en", "zh_CN") from now on; say the current error and resume
        point again in it."""
        if language == self.language:
            return
        self.language = language
        sid = self.current
        if sid and sid not in self.requests.running and not self._closed:
            self._show_kept_error(sid)
            self.spawn(self.refresh_resume(sid), "resume point")

    async def refresh_resume(self, sid: str) -> None:
        """Read the resume point (or who holds the conversation) and announce it."""
        if sid in self.requests.running:
            self.resumeChanged.emit(sid, None, "")
            return
        holder = await self.storage.lease_holder(sid)
        if holder is not None and not _is_this_process(holder):
            self.resumeChanged.emit(
                sid,
                None,
                QCoreApplication.translate(
                    "Controller", "This conversation is open in another window."
                ),
            )
            return
        agent = Agent(
            None, AgentRunConfig(sid, language=self.language), extensions=[self.extension]
        )
        point = await agent.resume_point()
        if sid in self.requests.running:  # a request began meanwhile
            point = None
        self.resumeChanged.emit(sid, point, "")


def _is_this_process(holder: Any) -> bool:
    import socket

    return (
        getattr(holder, "pid", None) == os.getpid()
        and getattr(holder, "host", "") == socket.gethostname()
    )

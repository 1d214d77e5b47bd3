"""The one place the window talks to the engine: it awaits engine streams and emits Qt signals.

The controller owns the conversation store (one `SQLiteSessionStorage`, shared by the
conversation list and every agent through one `SQLiteSessionExtension`), the conversation list
model and one `TranscriptModel` per conversation that is open or still answering. Widgets call
its plain methods; it runs the work as tasks it owns (kept in ``_tasks`` until they finish, so
none is dropped or left dangling) and reports back through signals.

A request (send or resume)::

    busyChanged(sid, True) ─► events folded into the transcript ─► (ok | error | stopped)
        ─► busyChanged(sid, False) ─► resumeChanged(sid, point-or-None, busy-text)

Stop cancels the request's task: the engine stores the partial answer (stop ``interrupted``,
raw ``cancelled``) and the transcript marks it stopped. A failed request's error is kept in
the conversation's metadata (``last_error``) and shown until a request succeeds. Switching
conversations does not touch a running request: its transcript model keeps receiving events
and is shown again when the person comes back.

Whenever a conversation opens, and after every request, the resume point is read again
(`refresh_resume`): a lease held by another process means "open in another window" instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal

from engine import (
    Agent,
    AgentEventType,
    AgentResumeError,
    AgentRunConfig,
    AssistantMessage,
    ContinuoError,
    ErrorAction,
    SQLiteSessionExtension,
    SQLiteSessionStorage,
    StopReason,
    UserMessage,
)
from engine.sentences import has_sentence, sentence

from .models.sessions import SESSION_ID_ROLE, SessionListModel
from .models.transcript import TranscriptModel

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

#: Builds a model adapter for a provider config (or None: no provider) and a model id.
ModelFactory = Callable[[Any, str | None], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of the model picker."""

    provider_id: str
    model: str
    label: str


#: what was kept of the answer a failed request cut off (``last_error["kept"]``)
KEPT_SAVED, KEPT_LOST = "saved", "lost"


def describe_error(exc: BaseException, language: str = "en") -> tuple[str, str]:
    """Say what went wrong in plain words, in ``language``, and which action helps.

    The engine's errors carry their own sentence (in any language) and an `ErrorAction`;
    the window adds its own words for the action (`MainWindow`), so they are not here.

    Returns:
        ``(message, action)``; action is an `ErrorAction` value (``"check_key"``,
        ``"resume"``...), ``"settings"`` (no provider is set up) or ``""``.
    """
    if isinstance(exc, _NoProvider):
        return str(exc), "settings"
    if isinstance(exc, ContinuoError):
        return exc.sentence(language), exc.action.value
    if isinstance(exc, OSError):
        return QCoreApplication.translate(
            "Controller", "Could not reach the provider."
        ), ErrorAction.CHECK_CONNECTION.value
    return QCoreApplication.translate("Controller", "Something went wrong ({name}).").format(
        name=type(exc).__name__
    ), "resume"


def _error_record(exc: BaseException, language: str, kept: str) -> dict[str, Any]:
    """What ``last_error`` keeps: enough to say it again in another language."""
    message, action = describe_error(exc, language)
    record: dict[str, Any] = {
        "message": message,
        "action": action,
        "kind": type(exc).__name__,
        "at": time.time(),
        "kept": kept,
    }
    if isinstance(exc, ContinuoError) and exc.key is not None:
        record["key"] = exc.key
        record["params"] = {
            k: v if isinstance(v, str | int | float) else str(v) for k, v in exc.params.items()
        }
    return record


def error_text(record: dict[str, Any], language: str) -> str:
    """A kept error's sentence in ``language`` (its own words when it has no catalog key)."""
    key = record.get("key")
    if isinstance(key, str) and has_sentence(key):
        try:
            return sentence(key, language, **dict(record.get("params") or {}))
        except (KeyError, IndexError, ValueError):
            pass  # a record from another version: its own words still say it
    return str(record.get("message", ""))


def _built(store: Any, config: Any, model: str | None) -> Any:
    """Build a provider adapter in a worker thread (see `Controller._adapter`)."""
    adapter = asyncio.run(store.build_model(config, model))
    # anyio loads its asyncio backend on the first request (about 40 ms); load it here.
    with contextlib.suppress(ImportError):
        importlib.import_module("anyio._backends._asyncio")
    return adapter


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
        self._extension = SQLiteSessionExtension(self.storage)
        self.sessions = SessionListModel(self)
        self.settings_store = settings_store
        self.settings: Any = None
        self._model_factory = model_factory
        self._tools = list(tools)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._running: dict[str, asyncio.Task[Any]] = {}  #: session id → its request
        self._transcripts: dict[str, TranscriptModel] = {}
        self._adapters: dict[tuple[str, str | None], Any] = {}
        self._choices: list[ModelChoice] = []
        #: One listing or reload at a time: a reload racing the listing at start built a
        #: second adapter for the same provider (the first was dropped with its connection
        #: open) and the older list could land last.
        self._models_lock = asyncio.Lock()
        self._choice: ModelChoice | None = None
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
        task = asyncio.ensure_future(coro)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        for sid, running in list(self._running.items()):
            if running is task:  # cancelled before its first step: nothing else cleared it
                del self._running[sid]
                self.busyChanged.emit(sid, False)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("background task %s failed: %s", task.get_name(), exc, exc_info=exc)
            self.problem.emit(describe_error(exc, self.language)[0])

    def is_running(self, session_id: str) -> bool:
        return session_id in self._running

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
        for task in list(self._running.values()):
            task.cancel()
        # Requests store their partial answers as they are cancelled; other work (listing
        # models, opening a conversation) gets a moment to finish, then is dropped.
        others = {t for t in self._tasks if t is not asyncio.current_task()}
        if others:
            _, late = await asyncio.wait(others, timeout=3)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=5)
        await self._close_adapters()
        await self._extension.close()
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
        if previous and previous != session_id and previous not in self._running:
            self._transcripts.pop(previous, None)
        model = self.transcript(session_id)
        if session_id not in self._running:
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
        self._select_choice_for(metadata)
        if session_id not in self._running:
            self._show_kept_error(session_id)
        else:
            self.errorChanged.emit(session_id, "", "", "")
        self.busyChanged.emit(session_id, session_id in self._running)
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
        metadata: dict[str, Any] = {}
        if self._choice is not None:
            metadata = {"provider_id": self._choice.provider_id, "model": self._choice.model}
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
        task = self._running.get(session_id)
        if task is not None:
            task.cancel()
            await asyncio.wait({task})
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
        async with self._models_lock:
            self.settings = await self.settings_store.load()
            self.settingsLoaded.emit(self.settings)
            await self._close_adapters()
            await self._list_models()

    async def _close_adapters(self) -> None:
        """Close and forget every built adapter (their HTTP connections with them)."""
        adapters, self._adapters = self._adapters, {}
        for adapter in adapters.values():
            close = getattr(adapter, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()

    def providers(self) -> list[Any]:
        return list(getattr(self.settings, "providers", []) or [])

    async def refresh_models(self) -> None:
        """Ask every configured provider for its models (concurrently) and fill the picker."""
        async with self._models_lock:
            await self._list_models()

    async def _list_models(self) -> None:
        providers = self.providers()

        async def listed(config: Any) -> list[str]:
            names = [config.default_model] if config.default_model else []
            try:
                adapter = await self._adapter(config, None)
                async with asyncio.timeout(10):
                    found = await adapter.list_models()
            except Exception as exc:  # offline or refused: the configured default still shows
                log.info("could not list models of %s: %s", config.name, type(exc).__name__)
                return names
            for name in found:
                name = str(getattr(name, "id", name))
                if name not in names:
                    names.append(name)
            return names

        results = await asyncio.gather(*(listed(p) for p in providers))
        choices: list[ModelChoice] = []
        for config, names in zip(providers, results, strict=True):
            for name in names:
                choices.append(ModelChoice(config.id, name, f"{name} — {config.name}"))
        self._choices = choices
        metadata = self._metadata.get(self.current or "", {})
        self._select_choice_for(metadata)

    def _select_choice_for(self, metadata: dict[str, Any]) -> None:
        choice = None
        provider_id, model = metadata.get("provider_id"), metadata.get("model")
        for candidate in self._choices:
            if candidate.provider_id == provider_id and candidate.model == model:
                choice = candidate
                break
        if choice is None and self._choice in self._choices:
            choice = self._choice
        if choice is None and self._choices:
            default = self.settings.default_provider() if self.settings is not None else None
            same = [c for c in self._choices if default is not None and c.provider_id == default.id]
            wanted = [c for c in same if c.model == getattr(default, "default_model", None)]
            choice = (wanted or same or self._choices)[0]
        self._choice = choice
        self.modelsChanged.emit(list(self._choices), choice)

    async def choose_model(self, choice: ModelChoice) -> None:
        """The person picked a model: use it from now on, and for this conversation."""
        self._choice = choice
        sid = self.current
        if sid:
            self._metadata[sid] = await self.storage.update_metadata(
                sid, {"provider_id": choice.provider_id, "model": choice.model}
            )

    async def _adapter(self, config: Any, model: str | None) -> Any:
        key = (getattr(config, "id", ""), model)
        adapter = self._adapters.get(key)
        if adapter is None:
            if self._model_factory is not None:
                adapter = await self._model_factory(config, model)
            elif self.settings_store is not None and config is not None:
                # Built in a worker thread: an adapter's HTTP client loads the CA certificates
                # (about 50-130 ms of OpenSSL work that releases the GIL) and imports httpcore's
                # connection code on first use; on the event loop that froze the window just
                # as an answer began to stream. The key lookup runs in that thread's own loop.
                adapter = await asyncio.to_thread(_built, self.settings_store, config, model)
            else:
                raise _NoProvider()
            self._adapters[key] = adapter
        return adapter

    async def _model_for(self, session_id: str) -> Any:
        metadata = self._metadata.get(session_id, {})
        provider_id = metadata.get("provider_id")
        model = metadata.get("model")
        if self._choice is not None and not provider_id:
            provider_id, model = self._choice.provider_id, self._choice.model
        config = None
        if self.settings is not None:
            config = self.settings.provider(provider_id) or self.settings.default_provider()
            if config is not None and config.id != provider_id:
                model = None
        if config is None and self._model_factory is None:
            raise _NoProvider()
        return await self._adapter(config, model or getattr(config, "default_model", None) or None)

    # ------------------------------------------------------------------ requests

    def send(self, text: str) -> asyncio.Task[Any] | None:
        """Send a message in the current conversation (a new one if none is open)."""
        text = text.strip()
        if not text:
            return None
        sid = self.current
        if sid and sid in self._running:
            return None
        task = self.spawn(self._send(sid, text), "send")
        if sid:
            self._running[sid] = task  # busy from now on, not from the task's first step
        return task

    async def _send(self, sid: str | None, text: str) -> None:
        if not sid:
            sid = await self.new_session()
        await self._request(sid, text)

    def resume(self) -> asyncio.Task[Any] | None:
        """Carry on from where the current conversation stopped."""
        sid = self.current
        if not sid or sid in self._running:
            return None
        task = self.spawn(self._request(sid, None), "resume")
        self._running[sid] = task  # busy from now on, not from the task's first step
        return task

    def stop(self, session_id: str | None = None) -> bool:
        """Cancel the request of a conversation (the current one by default)."""
        task = self._running.get(session_id or self.current or "")
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def _request(self, sid: str, text: str | None) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._running[sid] = task
        model_rows = self.transcript(sid)
        self.busyChanged.emit(sid, True)
        self.resumeChanged.emit(sid, None, "")
        self.errorChanged.emit(sid, "", "", "")
        failure: BaseException | None = None
        kept = ""  #: what was kept of an answer the failure cut off: KEPT_SAVED / KEPT_LOST
        try:
            try:
                adapter = await self._model_for(sid)
                metadata = self._metadata.get(sid, {})
                config = AgentRunConfig(
                    sid,
                    system_prompt=metadata.get("system_prompt") or None,
                    language=self.language,
                )
                agent = await Agent.create(
                    adapter, config=config, tools=self._tools, extensions=[self._extension]
                )
                events = agent.stream(text) if text is not None else agent.stream_resume()
                async for event in events:
                    model_rows.apply_event(event)
                    if event.type is AgentEventType.MESSAGE_APPENDED:
                        if isinstance(event.message, UserMessage):
                            await self._touch(sid)
                        elif _is_partial(event.message):
                            kept = KEPT_SAVED  # the engine announces a partial once stored
            except asyncio.CancelledError:
                # A Stop: the engine stored the partial (it raises StorageError when not).
                model_rows.finish_request(stopped=True, saved=True)
                if self._closed:
                    raise
            except _NoProvider as exc:
                failure = exc
            except AgentResumeError as exc:
                failure = exc
            except Exception as exc:
                # An answer still streaming here was never announced as stored: it is lost.
                stopped = isinstance(exc.__cause__, asyncio.CancelledError)
                if model_rows.finish_request(stopped=stopped, saved=False):
                    kept = KEPT_LOST
                failure = exc
                log.info("request failed: %s", type(exc).__name__)
            else:
                await self._set_error(sid, None)
        finally:
            self._running.pop(sid, None)
            self.busyChanged.emit(sid, False)
        if failure is not None:
            await self._set_error(sid, failure, kept)
        await self._touch(sid)
        await self.refresh_resume(sid)
        if sid not in self._running and sid != self.current:
            self._transcripts.pop(sid, None)

    async def _touch(self, sid: str) -> None:
        info = await self.storage.get_session(sid)
        if info is not None:
            self.sessions.upsert(info)

    async def _set_error(self, sid: str, exc: BaseException | None, kept: str = "") -> None:
        if exc is None:
            if self._metadata.get(sid, {}).get("last_error"):
                self._metadata[sid] = await self.storage.update_metadata(sid, {"last_error": None})
            self.errorChanged.emit(sid, "", "", "")
            return
        record = _error_record(exc, self.language, kept)
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
        if sid and sid not in self._running and not self._closed:
            self._show_kept_error(sid)
            self.spawn(self.refresh_resume(sid), "resume point")

    async def refresh_resume(self, sid: str) -> None:
        """Read the resume point (or who holds the conversation) and announce it."""
        if sid in self._running:
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
            None, AgentRunConfig(sid, language=self.language), extensions=[self._extension]
        )
        point = await agent.resume_point()
        if sid in self._running:  # a request began meanwhile
            point = None
        self.resumeChanged.emit(sid, point, "")


def _is_this_process(holder: Any) -> bool:
    import socket

    return (
        getattr(holder, "pid", None) == os.getpid()
        and getattr(holder, "host", "") == socket.gethostname()
    )


def _is_partial(message: Any) -> bool:
    stop = getattr(message, "stop", None)
    return (
        isinstance(message, AssistantMessage)
        and stop is not None
        and stop.reason is StopReason.INTERRUPTED
    )


class _NoProvider(ContinuoError):
    def __init__(self) -> None:
        super().__init__(
            QCoreApplication.translate(
                "Controller",
                "No model provider is set up yet. Open Settings and add one (for example Ollama or OpenAI).",
            )
        )

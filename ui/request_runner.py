"""The request runner: one request's life, from send (or Resume) to its last event.

::

    busyChanged(sid, True) ─► events folded into the transcript ─► (ok | error | stopped)
        ─► busyChanged(sid, False) ─► resumeChanged(sid, point-or-None, busy-text)

Stop cancels the request's task: the engine stores the partial answer (stop ``interrupted``,
raw ``cancelled``) and the transcript marks it stopped. The engine's stream is closed on
every exit (``aclosing``), so the conversation's lease is released even when the window fails
while folding an event; such a failure is an `InternalError` (logged with its traceback, said
as the app's own failure, never as "what arrived is saved"), and the transcript is read back
from the store so it shows what was really kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from engine import (
    Agent,
    AgentEventType,
    AgentResumeError,
    AgentRunConfig,
    AssistantMessage,
    StopReason,
    UserMessage,
)

from .errors import KEPT_LOST, KEPT_SAVED, KEPT_UNSENT, InternalError, NoProviderError

if TYPE_CHECKING:
    from .controller import Controller

__all__ = ["RequestRunner"]

log = logging.getLogger(__name__)


class RequestRunner:
    """The running requests of one window, one per conversation at most."""

    def __init__(self, controller: Controller) -> None:
        self._c = controller
        self.running: dict[str, asyncio.Task[Any]] = {}  #: session id → its request

    def is_running(self, session_id: str) -> bool:
        return session_id in self.running

    def task_done(self, task: asyncio.Task[Any]) -> None:
        """A task ended: one cancelled before its first step cleared nothing itself."""
        for sid, running in list(self.running.items()):
            if running is task:
                del self.running[sid]
                self._c.busyChanged.emit(sid, False)

    def send(self, sid: str | None, text: str) -> asyncio.Task[Any] | None:
        """Send ``text`` in conversation ``sid`` (a new one when None)."""
        if sid and sid in self.running:
            return None
        task = self._c.spawn(self._send(sid, text), "send")
        if sid:
            self.running[sid] = task  # busy from now on, not from the task's first step
        return task

    async def _send(self, sid: str | None, text: str) -> None:
        outcome = _Outcome()
        try:
            if not sid:
                sid = await self._c.new_session()
            await self.run(sid, text, outcome)
        finally:
            # Not stored (a full disk, a read-only folder): the composer keeps the text.
            if not outcome.stored and not outcome.told:  # never reached `run`
                self._c.inputStored.emit(text, False)

    def resume(self, sid: str) -> asyncio.Task[Any] | None:
        if sid in self.running:
            return None
        task = self._c.spawn(self.run(sid, None), "resume")
        self.running[sid] = task  # busy from now on, not from the task's first step
        return task

    def stop(self, sid: str) -> bool:
        task = self.running.get(sid)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def stop_all(self) -> None:
        for task in list(self.running.values()):
            task.cancel()

    async def stop_and_wait(self, sid: str) -> None:
        task = self.running.get(sid)
        if task is not None:
            task.cancel()
            await asyncio.wait({task})

    async def run(self, sid: str, text: str | None, outcome: _Outcome | None = None) -> None:
        """One request (``text`` None: Resume), from busy to the resume point after it."""
        c = self._c
        task = asyncio.current_task()
        assert task is not None
        self.running[sid] = task
        convs = c.conversations
        rows = convs.transcript(sid)
        c.busyChanged.emit(sid, True)
        c.resumeChanged.emit(sid, None, "")
        c.errorChanged.emit(sid, "", "", "")
        failure: BaseException | None = None
        #: what was kept of an answer the failure cut off: KEPT_SAVED / KEPT_LOST
        outcome = outcome if outcome is not None else _Outcome()
        reread = False
        try:
            try:
                await self._stream(sid, text, outcome)
            except asyncio.CancelledError:
                # A Stop: the engine stored the partial (it raises StorageError when not).
                rows.finish_request(stopped=True, saved=True)
                if c.closed:
                    raise
            except InternalError as exc:
                log.error("the window failed during a request", exc_info=exc.__cause__ or exc)
                failure, outcome.kept, reread = exc, "", True
            except (NoProviderError, AgentResumeError) as exc:
                failure = exc
            except Exception as exc:
                # An answer still streaming here was never announced as stored: it is lost.
                stopped = isinstance(exc.__cause__, asyncio.CancelledError)
                if rows.finish_request(stopped=stopped, saved=False):
                    outcome.kept = KEPT_LOST
                failure = exc
                log.info("request failed: %s", type(exc).__name__)
            else:
                await convs.set_error(sid, None)
        finally:
            self.running.pop(sid, None)
            c.busyChanged.emit(sid, False)
        if reread:
            rows.finish_request(stopped=True, saved=False)
            await convs.reread(sid)
        if text is not None and not outcome.stored:
            # Before the banner says so: the composer keeps it, free to send it again.
            outcome.told = True
            c.inputStored.emit(text, False)
            if failure is not None:
                outcome.kept = KEPT_UNSENT
        if failure is not None:
            await convs.set_error(sid, failure, outcome.kept)
        await convs.touch(sid)
        await c.resume_points.refresh(sid)
        convs.forget_unless_shown(sid)

    async def _stream(self, sid: str, text: str | None, outcome: _Outcome) -> None:
        """Run the engine's stream to its end, folding each event into the transcript.

        Raises:
            InternalError: folding an event failed (the stream is closed all the same).
        """
        c = self._c
        convs = c.conversations
        rows = convs.transcript(sid)
        metadata = convs.metadata(sid)
        adapter = await c.catalog.model_for(metadata)
        config = AgentRunConfig(
            sid, system_prompt=metadata.get("system_prompt") or None, language=c.language
        )
        agent = await Agent.create(adapter, config=config, tools=c.tools, extensions=[c.extension])
        events = agent.stream(text) if text is not None else agent.stream_resume()
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                try:
                    rows.apply_event(event)
                    if event.type is AgentEventType.MESSAGE_APPENDED:
                        if isinstance(event.message, UserMessage):
                            if text is not None and not outcome.stored:
                                outcome.stored = True
                                c.inputStored.emit(text, True)
                            await convs.touch(sid)
                        elif _is_partial(event.message):
                            outcome.kept = KEPT_SAVED  # the engine announces a partial once stored
                except Exception as exc:
                    raise InternalError(str(exc)) from exc


class _Outcome:
    """What a request kept of an answer a failure cut off (set as events arrive)."""

    __slots__ = ("kept", "stored", "told")

    def __init__(self) -> None:
        self.kept = ""
        self.stored = False  #: the message sent was stored
        self.told = False  #: the window was told it was not


def _is_partial(message: Any) -> bool:
    stop = getattr(message, "stop", None)
    return (
        isinstance(message, AssistantMessage)
        and stop is not None
        and stop.reason is StopReason.INTERRUPTED
    )

"""The window's side of the archive actions: `ui.archive.ArchiveHost` over the controller.

`WindowArchiveHost` is the one place the archive package meets the `Controller`; the flows see
only the `ArchiveHost` parts they are given. Reading the list again and replacing the store
are controller work (its store, its requests, its list model and signals) done here on its
behalf; the window gives what is its own: the status bar, selecting a conversation in the
list, and refreshing its search.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._shared import aio

if TYPE_CHECKING:
    import asyncio

    from engine import SQLiteSessionStorage

    from ..controller import Controller

__all__ = ["WindowArchiveHost"]

T = TypeVar("T")


class WindowArchiveHost:
    """`ui.archive.ArchiveHost` for one window.

    Args:
        controller: the window's controller.
        say: shows a line in the status bar for some milliseconds.
        select: selects a conversation (by id; "" for none) in the list.
        refresh_search: searches again for what is typed (the hits of the file as it was
            are stale).
    """

    def __init__(
        self,
        controller: Controller,
        *,
        say: Callable[[str, int], None],
        select: Callable[[str], None],
        refresh_search: Callable[[], None],
    ) -> None:
        self._c = controller
        self._say = say
        self._select = select
        self._refresh_search = refresh_search

    @property
    def storage(self) -> SQLiteSessionStorage:
        return self._c.storage

    @property
    def language(self) -> str:
        return self._c.language

    def usable(self) -> bool:
        return self._c.ready and not self._c.closed

    def spawn(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        return self._c.spawn(coro, name)

    def say(self, text: str, msecs: int) -> None:
        self._say(text, msecs)

    def shown(self) -> tuple[str, str] | None:
        from ..models.sessions import session_title

        sid = self._c.current
        return (sid, session_title(self._c.sessions.info(sid))) if sid else None

    def provider_names(self) -> dict[str, str]:
        settings = self._c.settings
        providers = getattr(settings, "providers", None) or []
        return {p.id: p.name for p in providers if p.name}

    async def reload(self, *, reopen: bool) -> None:
        from engine import ErrorAction, StorageError

        from .. import resume_marks
        from ..errors import Kept

        c = self._c
        try:
            sessions = await c.storage.list_sessions()
        except StorageError as exc:
            if not reopen:  # the list stays as it was; the failure is said until it works
                c.storage_failed(exc)
                return
            c.storage_failed(exc, at_start=True)  # the restored file cannot be used: a page
            sessions = []
        else:
            c.storage_failed(None)
        c.sessions.set_sessions(sessions)
        c.spawn(resume_marks.scan(c), "resume marks")
        self._refresh_search()
        if not reopen:
            self._select(c.current or "")
            return
        previous = c.current
        ids = [s.id for s in sessions]
        target = previous if previous in ids else (ids[0] if ids else None)
        if target is not None:
            await c.open_session(target)
        else:
            c.conversations.current = None
            c.currentChanged.emit("", None)
            c.resumeChanged.emit("", None, "")
            c.errorChanged.emit("", "", ErrorAction.NONE, Kept.NONE)
        if previous and previous != target:
            c.conversations.forget_unless_shown(previous)
        self._select(c.current or "")

    async def replace_store(self, replace: Callable[[], Path | None]) -> Path | None:
        """See `ui.archive.ArchiveHost.replace_store`.

        The store is opened again whatever happened, even when the window is closing (its
        close then closes the new store): a replacement that began always finishes.
        """
        from engine import SQLiteSessionExtension, SQLiteSessionStorage, finish

        c = self._c
        running = [t for t in c.requests.running.values() if not t.done()]
        c.requests.stop_all()  # each stored what had arrived of its answer
        if running:
            await aio().wait(running)
        old = c.storage
        error: BaseException | None = None
        aside: Path | None = None
        try:
            try:
                await c.extension.close()  # its leases; the store is the controller's
            finally:
                await old.close()
            try:
                # A replacement that began runs to its end; cancelled (the window closing),
                # its outcome is not waited for, so the cancellation is what is raised.
                aside = await finish(aio().to_thread(replace), discard_on_cancel=True)
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
            c.storage = storage
            c.extension = SQLiteSessionExtension(storage)
        await self.reload(reopen=True)
        if error is not None:
            raise error
        return aside


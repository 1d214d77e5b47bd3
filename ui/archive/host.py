"""The window's side of the archive actions: `ui.archive.ArchiveHost` over the controller.

`WindowArchiveHost` is the one place the archive package meets the controller, and it sees
only `ArchiveController` of it; the flows see only the `ArchiveHost` parts they are given.
Reading the list again and replacing the store are the controller's own work
(`Controller.reload_list`, `Controller.replace_store`: its store, its requests, its list model
and signals); the window gives what is its own: the status bar, selecting a conversation in
the list, and refreshing its search.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import asyncio

    from engine import SessionInfo, SQLiteSessionStorage

__all__ = ["ArchiveController", "WindowArchiveHost"]

T = TypeVar("T")


class ArchiveController(Protocol):
    """What the archive actions need of the controller (`ui.controller.Controller` is one)."""

    @property
    def storage(self) -> SQLiteSessionStorage: ...

    @property
    def language(self) -> str: ...

    @property
    def ready(self) -> bool: ...

    @property
    def closed(self) -> bool: ...

    @property
    def current(self) -> str | None: ...

    @property
    def settings(self) -> Any:
        """The loaded settings (None until loaded); read for the providers' names."""

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]: ...

    def session_info(self, session_id: str) -> SessionInfo | None: ...

    async def reload_list(self, *, reopen: bool) -> None: ...

    async def replace_store(self, replace: Callable[[], Path | None]) -> Path | None: ...


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
        controller: ArchiveController,
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
        from ..conversation.sessions import session_title

        sid = self._c.current
        return (sid, session_title(self._c.session_info(sid))) if sid else None

    def provider_names(self) -> dict[str, str]:
        settings = self._c.settings
        providers = getattr(settings, "providers", None) or []
        return {p.id: p.name for p in providers if p.name}

    async def reload(self, *, reopen: bool) -> None:
        """See `ui.archive.ArchiveHost.reload`: the controller reads the list again; the
        window searches again and selects what is shown."""
        await self._c.reload_list(reopen=reopen)
        self._refresh_search()
        self._select(self._c.current or "")

    async def replace_store(self, replace: Callable[[], Path | None]) -> Path | None:
        """See `ui.archive.ArchiveHost.replace_store` (`Controller.replace_store`), then the
        window's side of reading the list again."""
        try:
            return await self._c.replace_store(replace)
        finally:
            self._refresh_search()
            self._select(self._c.current or "")

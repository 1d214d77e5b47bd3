"""What the window asks of its controller (`WindowController`), and what answers before the
`Controller` exists (`ControllerPlaceholder`).

Start-up paints the window before the engine loads (`ui.app`: frame, widgets, then the
controller), so for a moment the widgets exist and the controller does not. Instead of
guarding every action with "is there a controller yet", the window holds the placeholder
until `MainWindow.attach`: every action is valid and does nothing (typed text stays in the
composer, a close waits for the store). Both satisfy `WindowController`, which mypy checks, so
neither can drift from what the window calls. The parts built at `attach` (the Resume bar,
the tool status, the archive and search hosts) are given the real controller's pieces instead.

This module imports nothing from the engine, so first paint stays free of it.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from engine import SessionInfo

    from .settings.model_catalog import ModelChoice
    from .settings.store import Settings, SettingsStore

__all__ = ["ControllerPlaceholder", "WindowController"]

log = logging.getLogger(__name__)


class WindowController(Protocol):
    """The controller as the window's widgets and commands use it (`ui.controller.Controller`
    is one; `ControllerPlaceholder` is one until it arrives)."""

    @property
    def ready(self) -> bool:
        """False for the placeholder: the store is not open yet."""

    @property
    def current(self) -> str | None: ...

    @property
    def data_dir(self) -> Path | None: ...

    @property
    def settings_store(self) -> SettingsStore | None: ...

    @property
    def settings(self) -> Settings | None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any] | None:
        """Run ``coro`` as an owned task (the placeholder drops it)."""

    def is_running(self, session_id: str) -> bool: ...

    def session_info(self, session_id: str) -> SessionInfo | None: ...

    def send(self, text: str) -> asyncio.Task[Any] | None: ...

    def stop(self, session_id: str | None = None) -> bool: ...

    def resume(self) -> asyncio.Task[Any] | None: ...

    def regenerate(self, message_id: str) -> asyncio.Task[Any] | None: ...

    def edit(self, message_id: str, text: str) -> asyncio.Task[Any] | None: ...

    def check_file(self) -> None: ...

    def set_language(self, language: str) -> None: ...

    async def open_empty(self) -> None: ...

    async def open_session(self, session_id: str) -> None: ...

    async def load_older(self) -> int: ...

    async def choose_model(self, choice: ModelChoice) -> None: ...

    async def set_system_prompt(self, text: str) -> None: ...

    async def accept_imported_prompt(self) -> None: ...

    async def discard_imported_prompt(self) -> None: ...

    async def rename_session(self, session_id: str, title: str) -> None: ...

    async def delete_session(self, session_id: str) -> None: ...

    async def switch_version(self, message_id: str, step: int) -> bool: ...

    async def branch_into_new_chat(self, message_id: str) -> str | None: ...

    async def reload_settings(self) -> None: ...

    async def retry_storage(self) -> None: ...


class ControllerPlaceholder:
    """The `WindowController` with nothing behind it yet."""

    ready = False  # the real controller says True
    current: str | None = None
    data_dir: Path | None = None
    settings_store: SettingsStore | None = None
    settings: Settings | None = None

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> None:
        """Drop the work: nothing can run before the store is open."""
        coro.close()
        log.debug("%s ignored: the window is still starting", name or "work")

    def is_running(self, session_id: str) -> bool:
        return False

    def session_info(self, session_id: str) -> None:
        return None

    def send(self, text: str) -> None:
        return None  # the text stays in the composer until the controller arrives

    def stop(self, session_id: str | None = None) -> bool:
        return False

    def resume(self) -> None:
        return None

    def regenerate(self, message_id: str) -> None:
        return None

    def edit(self, message_id: str, text: str) -> None:
        return None

    def check_file(self) -> None:
        pass  # nothing is open to check yet

    def set_language(self, language: str) -> None:
        pass  # the real controller is told the window's language when it arrives

    async def open_empty(self) -> None:
        pass

    async def open_session(self, session_id: str) -> None:
        pass

    async def load_older(self) -> int:
        return 0

    async def choose_model(self, choice: ModelChoice) -> None:
        pass

    async def set_system_prompt(self, text: str) -> None:
        pass

    async def accept_imported_prompt(self) -> None:
        pass

    async def discard_imported_prompt(self) -> None:
        pass

    async def rename_session(self, session_id: str, title: str) -> None:
        pass

    async def delete_session(self, session_id: str) -> None:
        pass

    async def switch_version(self, message_id: str, step: int) -> bool:
        return False

    async def branch_into_new_chat(self, message_id: str) -> None:
        return None

    async def reload_settings(self) -> None:
        pass

    async def retry_storage(self) -> None:
        pass

"""What the window talks to before its `Controller` exists: a controller-shaped placeholder.

Start-up paints the window before the engine loads (`ui.app`: frame, widgets, then the
controller), so for a moment the widgets exist and the controller does not. Instead of
guarding every action with "is there a controller yet", the window holds this placeholder
until `MainWindow.attach`: every action is valid and does nothing (typed text stays in the
composer, a close waits for the store). It imports nothing from the engine, so first paint
stays free of it.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

__all__ = ["ControllerPlaceholder"]

log = logging.getLogger(__name__)


class ControllerPlaceholder:
    """The `Controller`'s surface the window uses, with nothing behind it yet."""

    ready = False  # the real controller says True
    current: str | None = None
    settings_store: Any = None
    settings: Any = None

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> None:
        """Drop the work: nothing can run before the store is open."""
        coro.close()
        log.debug("%s ignored: the window is still starting", name or "work")

    def is_running(self, session_id: str) -> bool:
        return False

    def providers(self) -> list[Any]:
        return []

    def send(self, text: str) -> None:
        return None  # the text stays in the composer until the controller arrives

    def stop(self, session_id: str | None = None) -> bool:
        return False

    def resume(self) -> None:
        return None

    def check_file(self) -> None:
        pass  # nothing is open to check yet

    def set_language(self, language: str) -> None:
        pass  # the real controller is told the window's language when it arrives

    async def new_session(self) -> None:
        pass

    async def open_session(self, session_id: str) -> None:
        pass

    async def load_older(self) -> int:
        return 0

    async def choose_model(self, choice: Any) -> None:
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

    async def reload_settings(self) -> None:
        pass

    async def retry_storage(self) -> None:
        pass

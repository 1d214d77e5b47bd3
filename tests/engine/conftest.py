"""Fixtures for engine tests: a real SQLite file per test, reopened as after a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine import Agent, AgentRunConfig, Message
from engine.storage import SQLiteSessionExtension


class Store:
    """Opens the test's database file; every `agent()` gets a fresh connection (a restart)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._opened: list[SQLiteSessionExtension] = []

    def extension(self) -> SQLiteSessionExtension:
        ext = SQLiteSessionExtension(self.path)
        self._opened.append(ext)
        return ext

    async def seed(self, session_id: str, messages: Sequence[Message]) -> None:
        """Write a history directly, as a process that then died would have left it."""
        ext = self.extension()
        for message in messages:
            await ext.storage.append(session_id, "earlier-request", message)
        await ext.close()

    async def agent(
        self,
        model: Any,
        session_id: str = "s",
        tools: Sequence[Any] = (),
        extensions: Sequence[Any] = (),
        **config: Any,
    ) -> Agent:
        return await Agent.create(
            model,
            config=AgentRunConfig(session_id, **config),
            tools=tools,
            extensions=[self.extension(), *extensions],
        )

    async def history(self, session_id: str = "s") -> list[Message]:
        ext = self.extension()
        try:
            return await ext.storage.load(session_id)
        finally:
            await ext.close()

    async def close(self) -> None:
        for ext in self._opened:
            await ext.close()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


def types_of(events: Sequence[Any]) -> list[str]:
    return [e.type.value for e in events]


Recorder = Callable[..., None]

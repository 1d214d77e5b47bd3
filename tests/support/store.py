"""A real SQLite file for tests, reopened the way the app reopens it after a restart."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

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

    async def seed(
        self, session_id: str, messages: Sequence[Message], started: Iterable[str] = ()
    ) -> None:
        """Write a history directly, as a process that then died would have left it.

        ``started``: the tool call ids it had started running (their start records).
        """
        ext = self.extension()
        for message in messages:
            await ext.storage.append(session_id, "earlier-request", message)
        for call_id in started:
            await ext.storage.record_tool_start(session_id, call_id)
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

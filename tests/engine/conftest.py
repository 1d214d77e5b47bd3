"""Fixtures for engine tests: a real SQLite file per test, reopened as after a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(tmp_path / "continuo.sqlite3")
    yield s
    await s.close()


def types_of(events: Sequence[Any]) -> list[str]:
    return [e.type.value for e in events]


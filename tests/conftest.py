"""Checks every test in the suite gets: nothing it opened outlives it.

An aiosqlite connection runs its own non-daemon thread until it is closed; one left open keeps
the test process (and the app) from exiting after everything else finished. CI once printed
the suite's summary and then hung until its time limit. So each test must close every store it
opens, and a test that does not fails by name here instead of hanging the run at exit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest


def connection_threads() -> set[threading.Thread]:
    """The threads of open aiosqlite connections (named after their worker function)."""
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


@pytest.fixture(autouse=True)
def _no_connection_left_open() -> Iterator[None]:
    before = connection_threads()
    yield
    left = connection_threads() - before
    for thread in left:
        thread.join(timeout=5)  # a closed connection's thread ends just after close()
    alive = [t.name for t in left if t.is_alive()]
    if alive:
        pytest.fail(
            f"{len(alive)} SQLite connection(s) opened by this test were left open "
            f"({', '.join(alive)}): close every store the test opens; an open connection's "
            "thread keeps the process from exiting"
        )

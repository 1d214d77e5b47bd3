"""Fixtures for the window's tests: every async test here runs on a qasync loop.

pytest-asyncio runs ``async def`` tests; the ``pytest_asyncio_loop_factories`` hook below makes
it build a qasync `QEventLoop` over the one `QApplication` (pytest-qt's ``qapp``) for every
test in this folder, so coroutines, Qt signals and timers share one loop, as in the app.

Waiting inside an async test must not spin a nested Qt loop (``qtbot.waitSignal`` /
``waitUntil`` would run other tasks' steps inside this one's): use `next_signal` and
`tests.support.wait.until`.

The ``loop`` fixture is autouse: it collects every error the loop reports (an exception in a
task nobody awaited, a failing callback) and fails the test with them at teardown.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.support.wait import read_line  # noqa: E402
from ui.app import _event_loop_class  # noqa: E402


def _application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
    # Closing a test's window must not end the loop under the test.
    app.setQuitOnLastWindowClosed(False)
    return app  # type: ignore[return-value]


class _Deferred:
    """A loop callback that, come due inside a task's step, waits until the step is over.

    QTest's input functions (``mouseClick``, ``keyClick``, ``mouseMove``) process Qt events
    before they return, inside the test's own task step. A task's wakeup run there fails
    ("Cannot enter into task … while another task … is being executed"), asyncio drops it,
    and that task never runs again: a request still finishing when the test clicked a link
    hung the window's close and then the whole run (about one run in two of the links test).
    Deferred by a millisecond, it runs once the step is over. The app itself never spins a
    nested event loop inside a task, so this belongs to the tests' loop only.
    """

    __slots__ = ("_loop", "_callback", "handle")

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[..., Any]) -> None:
        self._loop = loop
        self._callback = callback
        self.handle: weakref.ref[asyncio.Handle] | None = None

    def __call__(self, *args: Any) -> None:
        handle = self.handle() if self.handle is not None else None
        if handle is not None and handle.cancelled():
            return  # cancelled while it waited for the step to end
        if asyncio.current_task(self._loop) is not None:
            _LOOP_CLASS.call_later(self._loop, 0.001, self, *args)
            return
        self._callback(*args)

    def __repr__(self) -> str:  # the handle's repr names the real callback
        return repr(self._callback)


_LOOP_CLASS: Any = _event_loop_class()


class _TestLoop(_LOOP_CLASS):  # type: ignore[misc, valid-type]
    """The app's loop, with callbacks that come due inside a task's step deferred."""

    def call_later(self, delay: float, callback: Any, *args: Any, context: Any = None) -> Any:
        deferred = _Deferred(self, callback)
        handle = super().call_later(delay, deferred, *args, context=context)
        # Weak: a handle its own callback kept alive lived on until the garbage collector
        # ran, and with it what its arguments hold (results from a connection's thread);
        # commits then failed now and then with "SQL statements in progress".
        deferred.handle = weakref.ref(handle)
        return handle


def pytest_asyncio_loop_factories(config: Any, item: Any) -> dict[str, Callable[[], Any]]:
    return {"qasync": lambda: _TestLoop(_application())}


#: Every test's loop stays referenced for the whole run. A closed qasync loop still has Qt
#: timers registered on its timer object (each cancelled ``call_later``: httpx timeouts,
#: ``wait_for``); if the garbage collector frees it, such a timer later fires on freed memory
#: and a later test dies with SIGSEGV.
_LOOPS: list[asyncio.AbstractEventLoop] = []


def _outside_the_loop(context: dict[str, Any]) -> bool:
    """An asyncio callback pytest-qt ran from its own ``processEvents`` (after each test's
    call and around its teardown), outside the qasync loop.

    qasync delivers callbacks through Qt events, so pytest-qt's event processing runs any
    still pending with no running loop. anyio's cancel-scope callback, left by an httpx
    connect cancelled at close, then fails with "no running event loop" (one run in eight);
    in the app the loop runs until it quits, so this cannot happen there. anyio's task group
    callback (``TaskGroup._spawn.<locals>.task_done``, the same connect's task ending) met the
    same fate once in a clean-clone run, after a settings dialog's probe was cancelled.
    """
    exc = context.get("exception")
    handle = repr(context.get("handle", ""))
    return (
        isinstance(exc, RuntimeError)
        and str(exc) == "no running event loop"
        and ("CancelScope._deliver_cancellation" in handle or "TaskGroup._spawn" in handle)
    )


def _delete_closed_widgets() -> None:
    """Delete the windows and dialogs a test closed. A closed window is only hidden; left
    alive, every later test's palette, style and font changes walk it too (the suite took
    minutes longer: 360 hidden top-level windows by the middle of tests/ui)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        if not widget.isVisible():
            widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(autouse=True)
async def loop() -> AsyncIterator[asyncio.AbstractEventLoop]:
    """The running qasync loop; fails the test on any error the loop reports."""
    running = asyncio.get_running_loop()
    _LOOPS.append(running)
    errors: list[dict[str, Any]] = []
    running.set_exception_handler(
        lambda _loop, context: None if _outside_the_loop(context) else errors.append(context)
    )
    yield running
    # Windows close on the loop, while it runs: their stores finish writing and close.
    while _OPEN_WINDOWS:
        window = _OPEN_WINDOWS.pop()
        if not window.controller._closed:
            await close_window(window)
    _delete_closed_widgets()
    running.set_exception_handler(None)
    if errors:
        lines = [f"{c.get('message')}: {c.get('exception')!r}" for c in errors]
        pytest.fail("unhandled errors on the event loop:\n" + "\n".join(lines))


#: The window's widgets DESIGN.md names (the settings dialog's ``settingsDialog`` aside).
WINDOW_OBJECT_NAMES = (
    "sessionList",
    "newChatButton",
    "transcript",
    "composer",
    "sendButton",
    "stopButton",
    "resumeButton",
    "modelPicker",
    "resumeLabel",
    "errorBanner",
    "sessionFilter",
)


def app_env(**extra: str) -> dict[str, str]:
    """The environment for the app in a subprocess: offscreen, unbuffered, no data-dir
    override from the caller's shell; ``extra`` on top."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONUNBUFFERED="1")
    env.pop("CONTINUO_DATA_DIR", None)
    env.update(extra)
    return env


async def read_until(proc: subprocess.Popen[str], marker: str, seconds: float = 60) -> list[str]:
    """Read an app subprocess's stdout (in a thread) until a ``SMOKE <marker>`` line."""
    lines: list[str] = []
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        left = deadline - asyncio.get_running_loop().time()
        line = await read_line(proc.stdout, f"SMOKE {marker}", seconds=max(left, 0.001))
        if not line:
            raise AssertionError(f"the app exited before {marker!r}: {lines}")
        lines.append(line.rstrip())
        if line.startswith(f"SMOKE {marker}"):
            return lines


async def next_signal(signal: Any, seconds: float = 10.0) -> tuple[Any, ...]:
    """Wait for the next emission of a Qt signal and return its arguments."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(fire)
    try:
        return await asyncio.wait_for(future, seconds)
    finally:
        signal.disconnect(fire)


# ---------------------------------------------------------------------------- the window


@pytest.fixture
def provider_server() -> Any:
    """The loopback provider (tests/support/provider_server.py), on a free port."""
    from tests.support.provider_server import ProviderServer

    with ProviderServer() as server:
        yield server


async def seed_provider(data_dir: Any, server: Any, model: str = "loopback-echo") -> Any:
    """Write settings with one OpenAI-compatible provider at ``server``; return the store."""
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    store = SettingsStore(data_dir, use_keychain=False)
    config = ProviderConfig(
        id="loopback",
        kind="openai",
        name="Loopback",
        base_url=server.openai_url,
        default_model=model,
    )
    await store.save(Settings(providers=[config], default_provider_id="loopback"))
    return store


_OPEN_WINDOWS: list[Any] = []


async def open_window(
    data_dir: Any, *, prepare: Callable[[Any], None] | None = None, **kwargs: Any
) -> Any:
    """Build, show and start a window over ``data_dir``; closed (store and all) at teardown.

    ``prepare`` gets the built window before any of its start-up work has run.
    """
    from ui.app import build_window

    kwargs.setdefault("first_run_dialog", False)
    window = build_window(data_dir, **kwargs)
    _OPEN_WINDOWS.append(window)
    if prepare is not None:
        prepare(window)
    window.show()
    await window.started()
    return window


async def close_window(window: Any) -> None:
    """Close a window the way a person does, and wait until its store is closed."""
    if window.controller._closed:
        return
    closed = asyncio.Event()
    window.closed.connect(closed.set)
    window.close()
    await asyncio.wait_for(closed.wait(), 15)
    await drain()


async def drain(turns: int = 20) -> None:
    """Let callbacks already scheduled run (tasks cancelled at close take their last step)."""
    for _ in range(turns):
        await asyncio.sleep(0)


class DictKeyring(KeyringBackend):
    """A keyring backend holding secrets in memory: a real backend for keyring's API."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.secrets.pop((service, username), None) is None:
            raise PasswordDeleteError("not found")


@pytest.fixture
def dict_keyring() -> Iterator[DictKeyring]:
    previous = keyring.get_keyring()
    backend = DictKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No usable keychain, as on a headless machine: keys go to the 0600 settings file."""
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)

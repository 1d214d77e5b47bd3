"""Start-up: one QApplication, a qasync event loop, one window per data folder.

``continuo`` (the gui-script), ``python -m ui`` and ``make run`` all call `main`. Options:
``--data-dir`` (or ``CONTINUO_DATA_DIR``) for a portable or test location, ``--version``, and
``--smoke-script FILE``, the one test hook (packaging's smoke test: after the window is shown
it runs ``ui.smoke.run_smoke_script(window, path)`` as an owned task).

By default data and settings live in the platform's user data folder (platformdirs). A
`QLockFile` in the data folder keeps one instance per folder: a second launch asks the first
(over a `QLocalServer` named after the folder) to bring its window forward, and exits.

`build_window` is what `main`, the tests, ``make screenshots`` and the smoke script use: it
builds the controller and the window and starts loading the conversations as soon as the
event loop runs, so the window paints first and the work happens after.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import inspect
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# httpx imports its command-line client (click, rich and pygments, about 200 ms before the
# first paint) whenever those happen to be installed; Continuo never runs it. Marking the
# module missing before anything imports httpx makes httpx take its own fallback.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from PySide6.QtCore import QLockFile, QTimer  # noqa: E402
from PySide6.QtGui import QIcon  # noqa: E402
from PySide6.QtNetwork import QLocalServer, QLocalSocket  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from .controller import Controller, ModelFactory  # noqa: E402
from .main_window import MainWindow  # noqa: E402

__all__ = ["EventLoop", "build_window", "default_data_dir", "main"]

log = logging.getLogger(__name__)

APP_NAME = "Continuo"
DATA_DIR_ENV = "CONTINUO_DATA_DIR"
_ICON = Path(__file__).resolve().parent.parent / "resources" / "icons"


def _event_loop_class() -> type[Any]:
    from qasync import QEventLoop

    class EventLoop(QEventLoop):  # type: ignore[misc, valid-type]
        """qasync's loop, plus what asyncio's own `run_forever` does for async generators.

        qasync does not install asyncio's async-generator hooks, so a generator dropped
        without ``aclose()`` (an HTTP stream left early) would be finalised by the garbage
        collector outside the loop and fail. With the hooks its ``aclose()`` runs as a task.
        """

        def run_forever(self) -> Any:
            old = sys.get_asyncgen_hooks()
            sys.set_asyncgen_hooks(
                firstiter=self._asyncgen_firstiter_hook,
                finalizer=self._asyncgen_finalizer_hook,
            )
            try:
                return super().run_forever()
            finally:
                sys.set_asyncgen_hooks(*old)

    return EventLoop


def EventLoop(app: QApplication) -> asyncio.AbstractEventLoop:  # noqa: N802 (a loop factory)
    """A qasync event loop over ``app`` with asyncio's async-generator hooks."""
    return _event_loop_class()(app)  # type: ignore[no-any-return]


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("continuo")
    except PackageNotFoundError:
        return "0.1.0"


def default_data_dir() -> Path:
    """The platform's user data folder for Continuo (XDG, ~/Library, %APPDATA%)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def resolve_data_dir(option: str | None) -> Path:
    """``--data-dir``, else ``CONTINUO_DATA_DIR``, else the platform default."""
    chosen = option or os.environ.get(DATA_DIR_ENV) or None
    return Path(chosen).expanduser().resolve() if chosen else default_data_dir()


def build_window(
    data_dir: str | os.PathLike[str],
    *,
    settings_store: Any = None,
    model_factory: ModelFactory | None = None,
    tools: Sequence[Any] = (),
    first_run_dialog: bool = True,
) -> MainWindow:
    """Build the main window over a data folder and start loading it.

    Args:
        data_dir: holds ``continuo.sqlite3`` and ``settings.json`` (created if missing).
        settings_store: a `ui.settings.SettingsStore`; by default one over ``data_dir``.
        model_factory: builds model adapters instead of the settings' providers (tests).
        tools: tools the agent may call.
        first_run_dialog: open the settings when no provider is configured.
    """
    path = Path(data_dir)
    path.mkdir(parents=True, exist_ok=True)
    if settings_store is None:
        from .settings import SettingsStore

        settings_store = SettingsStore(path)
    controller = Controller(
        path, settings_store=settings_store, model_factory=model_factory, tools=tools
    )
    window = MainWindow(controller, first_run_dialog=first_run_dialog)
    if _ICON.is_dir():
        icon = QIcon()
        for size in (16, 32, 48, 64, 128, 256):
            png = _ICON / f"continuo-{size}.png"
            if png.exists():
                icon.addFile(str(png))
        if not icon.isNull():
            window.setWindowIcon(icon)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        QTimer.singleShot(0, window.start)
    else:
        window.start()
    return window


def _server_name(data_dir: Path) -> str:
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return f"continuo-{digest}"


def _ask_first_instance(data_dir: Path) -> bool:
    """Ask the instance holding ``data_dir`` to show its window; True if it answered."""
    socket = QLocalSocket()
    socket.connectToServer(_server_name(data_dir))
    if not socket.waitForConnected(1000):
        return False
    socket.write(b"activate\n")
    socket.flush()
    socket.waitForBytesWritten(1000)
    socket.disconnectFromServer()
    return True


def _listen(data_dir: Path, window: MainWindow) -> QLocalServer:
    server = QLocalServer(window)
    name = _server_name(data_dir)
    QLocalServer.removeServer(name)  # a crashed instance may have left its socket file
    if not server.listen(name):
        log.info("second-launch channel not available: %s", server.errorString())

    def connected() -> None:
        while server.hasPendingConnections():
            conn = server.nextPendingConnection()
            conn.readyRead.connect(window.activate)
            conn.disconnected.connect(conn.deleteLater)
            window.activate()

    server.newConnection.connect(connected)
    return server


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="continuo",
        description="A desktop chat client for large language models whose conversations "
        "survive anything.",
    )
    parser.add_argument(
        "--data-dir",
        help=f"folder for conversations and settings (default: the platform's user data "
        f"folder; also ${DATA_DIR_ENV})",
    )
    parser.add_argument("--version", action="version", version=f"Continuo {version()}")
    parser.add_argument("--smoke-script", help="run a packaging smoke script after start-up")
    return parser.parse_args(list(argv) if argv is not None else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run Continuo; return the process exit code."""
    args = _parse(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=os.environ.get("CONTINUO_LOG", "WARNING").upper())
    data_dir = resolve_data_dir(args.data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(
            f"Continuo cannot use the data folder {data_dir}: {exc.strerror}. "
            "Choose another with --data-dir.",
            file=sys.stderr,
        )
        return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(version())
    app.setDesktopFileName("continuo")
    app.setQuitOnLastWindowClosed(False)  # the window closes itself once the store is closed
    lock = QLockFile(str(data_dir / "continuo.lock"))
    if not lock.tryLock(200):
        if _ask_first_instance(data_dir):
            print(f"Continuo is already open with {data_dir}; its window was brought forward.")
            return 0
        print(
            f"Another Continuo is using {data_dir} and did not answer. Close it, or choose "
            "another folder with --data-dir.",
            file=sys.stderr,
        )
        return 1
    try:
        with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
            return runner.run(_run(app, data_dir, args))  # type: ignore[arg-type]
    finally:
        lock.unlock()


async def _run(app: QApplication, data_dir: Path, args: argparse.Namespace) -> int:
    from .settings import Settings, SettingsStore

    store = SettingsStore(data_dir)
    try:
        settings = await store.load()
    except Exception as exc:  # a refused file: start with defaults; the window says why
        log.warning("settings not loaded: %s", exc)
        settings = Settings()
    try:
        from .i18n import install_translator

        install_translator(app, settings.language)
    except Exception as exc:  # the window still works in English
        log.warning("translations not installed: %s", exc)
    try:
        from .theme import apply_palette

        apply_palette(app, settings.theme)
    except Exception as exc:
        log.warning("theme not applied: %s", exc)

    window = build_window(data_dir, settings_store=store)
    _listen(data_dir, window)
    closed = asyncio.Event()
    window.closed.connect(closed.set)
    exit_code = 0

    def interrupt(*_: Any) -> None:
        window.close()

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    # Python runs signal handlers only between bytecodes: wake it up now and then.
    heartbeat = QTimer(window)
    heartbeat.start(500)
    heartbeat.timeout.connect(lambda: None)

    window.show()
    if args.smoke_script:

        async def smoke() -> None:
            nonlocal exit_code
            await window.started()
            from .smoke import run_smoke_script  # type: ignore[import-not-found]

            result = run_smoke_script(window, args.smoke_script)
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, int) and not isinstance(result, bool):
                exit_code = result
                window.close()

        window.controller.spawn(smoke(), "smoke script")
    await closed.wait()
    return exit_code

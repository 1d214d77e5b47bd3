"""Start-up: one QApplication, a qasync event loop, one window per data folder.

``continuo`` (the gui-script), ``python -m ui`` and ``make run`` all call `main`. Options:
``--data-dir`` (or ``CONTINUO_DATA_DIR``) for a portable or test location, ``--version``, and
``--mcp-server MODULE`` (runs an MCP server installed with the app, for Settings › Tools'
presets in the bundle) and ``--smoke-script FILE``, the one test hook (packaging's smoke test: after the window is shown
it runs ``ui.smoke.run_smoke_script(window, path)`` as an owned task).

By default data and settings live in the platform's user data folder (platformdirs). A
`QLockFile` in the data folder keeps one instance per folder: a second launch asks the first
(over a `QLocalServer` named after the folder) to bring its window forward, and exits.

Start-up paints before it loads (DESIGN.md: heavy imports wait until after the first
paint). `main` reads the language, theme and window geometry from ``settings.json``, builds
the window from Qt widgets alone and waits for its first paint; only then does it import
asyncio, qasync and the engine, open the store, build the `Controller` and `attach` it, and
the conversations fill in. Reading that small file is the one piece of file I/O on the GUI
thread, and it happens before the event loop and the window exist.

`build_window` is what the tests, ``make screenshots`` and the benchmarks use: it builds the
controller and the window in one go and starts loading the conversations as soon as the
event loop runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# httpx imports its command-line client (click, rich and pygments, about 200 ms before the
# first paint) whenever those happen to be installed; Continuo never runs it. Marking the
# module missing before anything imports httpx makes httpx take its own fallback.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from PySide6.QtCore import QEvent, QEventLoop, QLockFile, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtNetwork import QLocalServer

    from .main_window import MainWindow
    from .settings.model_catalog import ModelFactory

__all__ = ["EventLoop", "build_window", "default_data_dir", "main"]

log = logging.getLogger(__name__)

APP_NAME = "Continuo"
DATA_DIR_ENV = "CONTINUO_DATA_DIR"
_ICON = Path(__file__).resolve().parent.parent / "resources" / "icons"


def _event_loop_class() -> type[Any]:
    from qasync import QEventLoop  # type: ignore[import-untyped]  # (no type information)

    class EventLoop(QEventLoop):  # type: ignore[misc]
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
        settings_store: a `ui.settings.store.SettingsStore`; by default one over ``data_dir``.
        model_factory: builds model adapters instead of the settings' providers (tests).
        tools: tools the agent may call.
        first_run_dialog: open the settings when no provider is configured.
    """
    from .main_window import MainWindow

    window = MainWindow(first_run_dialog=first_run_dialog)
    _set_icon(window)
    attach_controller(
        window, data_dir, settings_store=settings_store, model_factory=model_factory, tools=tools
    )
    return window


def attach_controller(
    window: MainWindow,
    data_dir: str | os.PathLike[str],
    *,
    settings_store: Any = None,
    model_factory: ModelFactory | None = None,
    tools: Sequence[Any] = (),
) -> None:
    """The second step: build the `Controller` over ``data_dir``, attach it, start loading."""
    import asyncio

    from .common.folders import make_private_folder
    from .controller import Controller

    path = Path(data_dir)
    make_private_folder(path)
    if settings_store is None:
        from .settings.store import SettingsStore

        settings_store = SettingsStore(path)
    controller = Controller(
        path, settings_store=settings_store, model_factory=model_factory, tools=tools
    )
    window.attach(controller)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        QTimer.singleShot(0, window.start)
    else:
        window.start()


def _set_icon(window: QWidget) -> None:
    if not _ICON.is_dir():
        return
    from PySide6.QtGui import QIcon  # its enums cost about 3 ms: after the first paint

    icon = QIcon()
    for size in (16, 32, 48, 64, 128, 256):
        png = _ICON / f"continuo-{size}.png"
        if png.exists():
            icon.addFile(str(png))
    if not icon.isNull():
        window.setWindowIcon(icon)


def read_appearance(data_dir: Path) -> dict[str, str]:
    """The language, theme and window geometry in ``settings.json``, for the first frame.

    Never raises: a missing or unreadable file gives ``{}`` (the settings store refuses such
    a file properly, with a message, once the event loop runs).
    """
    try:
        text = (data_dir / "settings.json").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    import json

    try:
        raw = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(raw, dict):
        return {}
    keys = ("language", "theme", "window_geometry")
    found = {k: raw[k] for k in keys if isinstance(raw.get(k), str)}
    if isinstance(raw.get("sidebar_width"), int):  # the list's width, as text like the rest
        found["sidebar_width"] = str(raw["sidebar_width"])
    return found


def show_first_frame(app: QApplication, data_dir: Path) -> MainWindow:
    """Show the window's frame, wait for its first paint, then build its widgets.

    The frame has the title, size and the theme's colours; the icon and the widgets follow
    within about a tenth of a second (`make bench` prints both), the conversations once the
    controller is attached.
    """
    appearance = read_appearance(data_dir)
    try:
        from .common.i18n import install_translator

        install_translator(app, appearance.get("language", "system"))
    except Exception as exc:  # the window still works in English
        log.warning("translations not installed: %s", exc)
    from .common.theme import apply_palette

    theme = appearance.get("theme", "system")
    try:
        apply_palette(app, theme, quick=True, sheet=False)
    except Exception as exc:
        log.warning("theme not applied: %s", exc)
    from .main_window import MainWindow

    window = MainWindow(frame_only=True)
    geometry = appearance.get("window_geometry")
    if geometry:
        window.restore_geometry_text(geometry)
    window.show()
    _wait_for_paint(window)
    _set_icon(window)  # QIcon and its PNGs after the first paint (the desktop file names it)
    try:
        apply_palette(app, theme, quick=True)  # now the style sheet, for the widgets
    except Exception as exc:
        log.warning("theme not applied: %s", exc)
    window.build_contents()
    width = appearance.get("sidebar_width", "")
    window.restore_sidebar_width(int(width) if width.isdigit() else None)
    _wait_for_paint(window)  # the widgets, before the engine's imports hold the thread
    return window


class _PaintWatch(QObject):
    def __init__(self, window: QWidget, loop: QEventLoop) -> None:
        super().__init__()
        self._window = window
        self._loop = loop

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(obj, QWidget)
            and obj.window() is self._window
        ):
            # Quit after this paint is done and the frame is on screen.
            QTimer.singleShot(0, self._loop.quit)
        return False


def _wait_for_paint(window: QWidget, timeout_ms: int = 500) -> None:
    # A local loop before the asyncio loop exists: it runs until the window has painted
    # (or half a second, for a window that is not exposed: minimised, another workspace).
    loop = QEventLoop()
    watch = _PaintWatch(window, loop)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(watch)
    timeout = QTimer()
    timeout.setSingleShot(True)
    timeout.timeout.connect(loop.quit)
    timeout.start(timeout_ms)
    try:
        loop.exec()
    finally:
        timeout.stop()
        app.removeEventFilter(watch)


async def settle_after_start(window: MainWindow) -> None:
    """Once the window has started, take what start-up loaded out of the collector's way.

    Python's full garbage collection walks every tracked object, and start-up leaves tens of
    thousands that live as long as the app (modules, classes, Qt wrappers, the Markdown and
    Pygments tables): walking them stalled the window for 50-70 ms in the middle of a streamed
    answer. Once they are loaded (the window started, the Markdown warm-up done), one
    collection clears start-up's garbage and ``gc.freeze()`` moves the survivors to the
    permanent generation, which later collections skip. Objects frozen here are still freed
    by reference counting; only a reference cycle among them would stay, and start-up's
    cycles were collected just before.
    """
    import asyncio
    import gc

    from .common import markdown

    await window.started()
    gc.enable()  # `main` keeps the collector off until the list is shown
    await asyncio.to_thread(markdown.wait_warm, 30.0)
    gc.collect()
    gc.freeze()


async def _set_version(window: MainWindow) -> None:
    import asyncio

    # importlib.metadata reads every installed package's metadata: a worker thread's job,
    # once the list is shown (the thread would take turns with the window's start).
    await window.started()
    QApplication.setApplicationVersion(await asyncio.to_thread(version))


def _server_name(data_dir: Path) -> str:
    import hashlib

    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return f"continuo-{digest}"


def _ask_first_instance(data_dir: Path) -> bool:
    """Ask the instance holding ``data_dir`` to show its window; True if it answered."""
    from PySide6.QtNetwork import QLocalSocket

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
    from PySide6.QtNetwork import QLocalServer

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


class _VersionAction(argparse.Action):
    """``--version``; the version is looked up only when asked (importlib.metadata is slow)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("nargs", 0)
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        parser.exit(message=f"Continuo {version()}\n")


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
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--smoke-script", help="run a packaging smoke script after start-up")
    return parser.parse_args(list(argv) if argv is not None else None)


#: ``continuo --mcp-server MODULE [ARGS]`` runs one of these MCP servers on stdin/stdout
#: and exits: how Settings › Tools' presets start a server that is installed with the app
#: when there is no Python to run ``-m`` with (the bundle; see `ui.settings.tools_page`).
APP_SERVERS = ("mcp_server_time", "mcp_server_fetch", "mcp_server_git")


def run_mcp_server(module: str, args: Sequence[str]) -> int:
    """Run the installed MCP server ``module`` (one of `APP_SERVERS`) as its own command."""
    if module not in APP_SERVERS:
        print(f"continuo: --mcp-server takes one of {', '.join(APP_SERVERS)}", file=sys.stderr)
        return 2
    import importlib

    try:
        server = importlib.import_module(module)
    except ImportError:
        print(f"continuo: the MCP server {module} is not installed with Continuo", file=sys.stderr)
        return 2
    sys.argv = [module.replace("_", "-"), *args]  # the server reads its own options
    result = server.main()
    return result if isinstance(result, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run Continuo; return the process exit code."""
    given = list(argv if argv is not None else sys.argv[1:])
    if given[:1] == ["--mcp-server"] and len(given) > 1:
        return run_mcp_server(given[1], given[2:])
    args = _parse(given)
    logging.basicConfig(level=os.environ.get("CONTINUO_LOG", "WARNING").upper())
    data_dir = resolve_data_dir(args.data_dir)
    from .common.folders import make_private_folder

    try:
        make_private_folder(data_dir)  # 0700: other local users must not read conversations
    except OSError as exc:
        print(
            f"Continuo cannot use the data folder {data_dir}: {exc.strerror}. "
            "Choose another with --data-dir.",
            file=sys.stderr,
        )
        return 2
    running = QApplication.instance()
    app = running if isinstance(running, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setDesktopFileName("continuo")
    app.setQuitOnLastWindowClosed(False)  # the window closes itself once the store is closed
    lock = QLockFile(str(data_dir / "continuo.lock"))
    if lock.tryLock(200):
        pass
    elif lock.error() == QLockFile.LockError.PermissionError:
        # A folder this user cannot write: no other instance can write it either. The
        # window opens and says what is wrong with the folder (its storage notice).
        log.warning("the data folder %s cannot be written; not locked", data_dir)
    else:
        if _ask_first_instance(data_dir):
            print(f"Continuo is already open with {data_dir}; its window was brought forward.")
            return 0
        print(
            f"Another Continuo is using {data_dir} and did not answer. Close it, or choose "
            "another folder with --data-dir.",
            file=sys.stderr,
        )
        return 1
    # Start-up makes tens of thousands of objects that live as long as the app; collecting
    # them generation by generation cost about 30 ms before the list was shown. The collector
    # is back on once it is (`settle_after_start`), and on the way out whatever happened.
    import gc

    gc.disable()
    try:
        window = show_first_frame(app, data_dir)
        # Only now the rest: asyncio, qasync, the engine and the store.
        import asyncio

        with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
            return runner.run(_run(window, data_dir, args))
    finally:
        gc.enable()
        lock.unlock()


async def _run(window: MainWindow, data_dir: Path, args: argparse.Namespace) -> int:
    import asyncio
    import signal

    try:
        from .common.theme import apply_palette

        app = QApplication.instance()
        if isinstance(app, QApplication):  # now ask the OS properly (see show_first_frame)
            apply_palette(app, str(app.property("continuoTheme") or "system"))
    except Exception as exc:
        log.warning("theme not applied: %s", exc)
    attach_controller(window, data_dir)

    async def listen() -> None:
        # QtNetwork after the list: a second launch in the first half second is not answered
        # (it says so and exits), which is rarer than every start waiting for it.
        await window.started()
        _listen(data_dir, window)

    window.controller.spawn(listen(), "second-launch channel")
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

    # The version (importlib.metadata) is looked up off the GUI thread, after start-up.
    window.controller.spawn(_set_version(window), "version")
    window.controller.spawn(settle_after_start(window), "settle after start")
    if args.smoke_script:

        async def smoke() -> None:
            nonlocal exit_code
            await window.started()
            from .smoke import run_smoke_script

            exit_code = await run_smoke_script(window, args.smoke_script)
            window.close()

        window.controller.spawn(smoke(), "smoke script")
    await closed.wait()
    return exit_code

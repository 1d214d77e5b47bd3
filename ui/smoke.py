"""The smoke-script runner: drives the real window from a small text file (``--smoke-script``).

This is the one test hook in ``ui/`` (DESIGN.md, Testing). ``packaging/smoke.sh`` starts the
built bundle with ``--smoke-script FILE``; after the window is shown and has loaded its
conversations, `ui.app` runs `run_smoke_script` as an owned task. The script works the window
only as a person would, through its widgets by objectName (``composer``, ``sendButton``,
``resumeButton``, ``transcript``), and checks the outcome in the conversation store. Each step
prints a marker line on stdout, flushed, that the shell script waits on::

    SMOKE painted                  SMOKE stored FIRST-ANSWER-DONE
    SMOKE resume-offered <tooltip> SMOKE FAIL <what went wrong>     ...

The script language, one step a line (``#`` starts a comment, blank lines are skipped):

=====================  ==================================================================
``painted``            wait until the event loop has delivered a paint to the window
``timeout SECONDS``    how long each later ``wait-*`` step may take (default 30)
``send TEXT``          type TEXT into the composer and click Send; fails if it is refused
``wait-shown TEXT``    wait until the transcript shows a row containing TEXT
``wait-stored TEXT``   wait until the open conversation's last stored message is a finished
                       answer containing TEXT, and no request is running
``wait-resume``        wait until the Resume button is shown; prints its tooltip
``expect-no-resume``   fail if the Resume button is shown
``wait-visible NAME``  wait until a widget with objectName NAME is shown (it may not exist
                       yet); prints the texts of its labels, joined by `` | ``
``expect-icon``        fail unless the window carries the app icon (16 to 256 px)
``wait-activated``     wait until a second launch on the same data folder has brought
                       this window forward
``click NAME``         click the visible, enabled button with objectName NAME
``mark NAME``          print ``SMOKE NAME`` (a point the shell waits on)
``screenshot PATH``    save what the window shows as a PNG at PATH ($VARS expanded)
``hold``               print ``SMOKE holding`` and wait until the process is killed
``quit [CODE]``        end the script; the app closes and exits with CODE (default 0)
=====================  ==================================================================

A step that fails prints ``SMOKE FAIL`` with what it waited for and what the window showed
(error banner, status bar), and the app exits with status 1. Waits poll their condition
against a deadline; none is a bare sleep.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QMainWindow, QWidget

__all__ = ["SmokeFailure", "parse_script", "run_smoke_script"]

DEFAULT_TIMEOUT = 30.0
_POLL = 0.05  # seconds between checks of a waited-for condition


class SmokeFailure(Exception):
    """A smoke step did not get the outcome it waited for."""


def parse_script(text: str) -> list[tuple[str, str]]:
    """Split a script into ``(command, argument)`` steps; raise SmokeFailure on unknown ones."""
    steps = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        command, _, argument = line.partition(" ")
        if command not in _COMMANDS:
            raise SmokeFailure(
                f"line {number}: unknown step {command!r}; known steps: {', '.join(_COMMANDS)}"
            )
        steps.append((command, argument.strip()))
    return steps


def _say(text: str) -> None:
    print(f"SMOKE {text}", flush=True)


class _PaintWatcher(QObject):
    """Counts paint events delivered to the window or any widget inside it."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and (watched is self._window or self._window.isAncestorOf(watched))
        ):
            self.paints += 1
        return False


class _Runner:
    def __init__(self, window: QMainWindow) -> None:
        self.window = window
        self.controller: Any = getattr(window, "controller", None)
        self.timeout = DEFAULT_TIMEOUT

    # ------------------------------------------------------------------ helpers

    def child(self, kind: type[QWidget], name: str) -> Any:
        widget = self.window.findChild(kind, name)
        if widget is None:
            raise SmokeFailure(f"the window has no {kind.__name__} named {name!r}")
        return widget

    def shown(self, kind: type[QWidget], name: str) -> Any:
        """The first shown widget named ``name`` (rows appear as a request goes: a tool card's
        buttons exist only once its call does), or None."""
        return next((w for w in self.window.findChildren(kind, name) if w.isVisible()), None)

    async def until(self, what: str, condition: Callable[[], Any]) -> Any:
        """Return the first truthy value of `condition` (sync or async) before the deadline."""
        deadline = time.monotonic() + self.timeout
        while True:
            value = condition()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
            if time.monotonic() > deadline:
                raise SmokeFailure(f"waited {self.timeout:g}s for {what}")
            await asyncio.sleep(_POLL)

    def current_session(self) -> str | None:
        return getattr(self.controller, "current", None) or None

    def visible_state(self) -> str:
        """What the window shows that may explain a failure."""
        notes = []
        banner = self.window.findChild(QLabel, "errorBanner")
        if banner is not None and banner.isVisible() and banner.text():
            notes.append(f"error banner: {banner.text()!r}")
        status = self.window.statusBar().currentMessage() if self.window.statusBar() else ""
        if status:
            notes.append(f"status bar: {status!r}")
        return "; ".join(notes) or "no error shown"

    # ------------------------------------------------------------------ steps

    async def painted(self, _: str) -> None:
        watcher = _PaintWatcher(self.window)
        app = QApplication.instance()
        assert app is not None  # the window exists, so the application does
        app.installEventFilter(watcher)
        try:
            self.window.update()
            await self.until("the window to be painted", lambda: watcher.paints > 0)
        finally:
            app.removeEventFilter(watcher)
        _say("painted")

    async def set_timeout(self, argument: str) -> None:
        try:
            self.timeout = float(argument)
        except ValueError:
            raise SmokeFailure(f"timeout needs a number of seconds, not {argument!r}") from None

    async def send(self, text: str) -> None:
        if not text:
            raise SmokeFailure("send needs the text to type")
        composer = self.child(QWidget, "composer")
        composer.setPlainText(text)
        self.child(QAbstractButton, "sendButton").click()
        # The window clears the composer once the controller accepted the message.
        await self.until(
            f"the message {text!r} to be accepted",
            lambda: not composer.toPlainText().strip(),
        )
        _say(f"sent {text}")

    def _transcript_texts(self) -> list[str]:
        view = self.child(QWidget, "transcript")
        model = view.model() if hasattr(view, "model") else None
        if model is None:
            return []
        role = Qt.ItemDataRole.DisplayRole
        return [str(model.index(r, 0).data(role) or "") for r in range(model.rowCount())]

    async def wait_shown(self, text: str) -> None:
        await self.until(
            f"the transcript to show {text!r}",
            lambda: any(text in row for row in self._transcript_texts()),
        )
        _say(f"shown {text}")

    async def wait_stored(self, text: str) -> None:
        from engine import AssistantMessage

        storage = getattr(self.controller, "storage", None)
        if storage is None:
            raise SmokeFailure("the window has no conversation store to check")

        async def stored() -> bool:
            sid = self.current_session()
            if sid is None or self.controller.is_running(sid):
                return False
            tail = await storage.load_tail(sid, 1)
            if not tail:
                return False
            last = tail[-1].message
            return isinstance(last, AssistantMessage) and last.stop is None and text in last.content

        await self.until(f"a finished answer containing {text!r} to be stored", stored)
        _say(f"stored {text}")

    async def wait_resume(self, _: str) -> None:
        button = self.child(QAbstractButton, "resumeButton")
        await self.until("the Resume button to be shown", button.isVisible)
        _say(f"resume-offered {button.toolTip()}")

    async def expect_no_resume(self, _: str) -> None:
        button = self.child(QAbstractButton, "resumeButton")
        if button.isVisible():
            raise SmokeFailure(f"Resume is offered but should not be: {button.toolTip()!r}")
        _say("no-resume")

    async def wait_visible(self, name: str) -> None:
        widget = await self.until(f"{name} to be shown", lambda: self.shown(QWidget, name))
        texts = [label.text() for label in widget.findChildren(QLabel) if label.isVisible()]
        _say(f"visible {name} {' | '.join(t for t in texts if t)}")

    async def expect_icon(self, _: str) -> None:
        sizes = sorted(s.width() for s in self.window.windowIcon().availableSizes())
        if not sizes or sizes[0] > 16 or sizes[-1] < 256:
            raise SmokeFailure(f"the window icon has sizes {sizes}, not 16 to 256 px")
        _say(f"icon {','.join(map(str, sizes))}")

    async def wait_activated(self, _: str) -> None:
        await self.until(
            "a second launch to bring the window forward",
            lambda: getattr(self.window, "activations", 0) > 0,
        )
        _say("activated")

    async def click(self, name: str) -> None:
        button = await self.until(
            f"{name} to be visible and enabled",
            lambda: (b := self.shown(QAbstractButton, name)) is not None and b.isEnabled() and b,
        )
        button.click()
        _say(f"clicked {name}")

    async def screenshot(self, path: str) -> None:
        if not path:
            raise SmokeFailure("screenshot needs the path of the PNG to write")
        path = os.path.expandvars(path)
        if not self.window.grab().save(path, "PNG"):
            raise SmokeFailure(f"could not write the screenshot {path}")
        _say(f"screenshot {path}")

    async def mark(self, name: str) -> None:
        _say(name or "mark")

    async def hold(self, _: str) -> None:
        _say("holding")
        await asyncio.Event().wait()  # until the shell kills this process


_COMMANDS: dict[str, Callable[[_Runner, str], Awaitable[None]]] = {
    "painted": _Runner.painted,
    "timeout": _Runner.set_timeout,
    "send": _Runner.send,
    "wait-shown": _Runner.wait_shown,
    "wait-stored": _Runner.wait_stored,
    "wait-resume": _Runner.wait_resume,
    "expect-no-resume": _Runner.expect_no_resume,
    "wait-visible": _Runner.wait_visible,
    "expect-icon": _Runner.expect_icon,
    "wait-activated": _Runner.wait_activated,
    "click": _Runner.click,
    "mark": _Runner.mark,
    "screenshot": _Runner.screenshot,
    "hold": _Runner.hold,
    "quit": _Runner.mark,  # handled in run_smoke_script; listed so parse_script knows it
}


async def run_smoke_script(window: QMainWindow, path: str | Path) -> int:
    """Run the smoke script at `path` against `window`; return the exit status for the app.

    Never raises (a failure is reported on stdout and returned as status 1), so the app can
    always exit with the status.
    """
    runner = _Runner(window)
    try:
        text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        steps = parse_script(text)
        for command, argument in steps:
            if command == "quit":
                code = int(argument or 0)
                _say(f"quit {code}")
                return code
            await _COMMANDS[command](runner, argument)
        _say("quit 0")
        return 0
    except SmokeFailure as exc:
        _say(f"FAIL {exc} ({runner.visible_state()})")
    except OSError as exc:
        _say(f"FAIL cannot read the smoke script {path}: {exc.strerror or exc}")
    except Exception as exc:  # any other fault still ends the app with a status
        _say(f"FAIL {type(exc).__name__}: {exc} ({runner.visible_state()})")
    return 1

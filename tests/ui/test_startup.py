"""Start-up: the window paints before the engine loads, in the saved language and theme; a
window closed before its controller arrives still closes properly; a second launch on the
same data folder brings the first window forward instead of opening another.

The first two run the real start-up code (`ui.app.show_first_frame`) in a fresh interpreter,
because what matters is which modules are loaded when the first frame is painted.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.wait import until
from tests.ui.conftest import WINDOW_OBJECT_NAMES, app_env, close_window, next_signal, read_until
from ui.app import attach_controller
from ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


#: What the first frame and the widgets must not wait for.
SLOW_MODULES = ("engine", "asyncio", "qasync", "httpx", "aiosqlite", "keyring", "markdown_it")

_FIRST_FRAME = """
import json, sys
from pathlib import Path
from typing import Any
from PySide6.QtWidgets import QApplication, QPushButton, QWidget
from ui.app import show_first_frame
app = QApplication(sys.argv[:1])
window = show_first_frame(app, Path(sys.argv[1]))
print(json.dumps({
    "loaded": [m for m in SLOW if m in sys.modules],
    "found": [n for n in NAMES if window.findChild(QWidget, n) is not None],
    "visible": window.isVisible(),
    "send": window.findChild(QPushButton, "sendButton").text(),
    "scheme": app.property("continuoScheme"),
    "width": window.width(),
}))
"""


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a fresh interpreter offscreen in the checkout; wait for it and capture its output."""
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=app_env(), capture_output=True, text=True, timeout=60
    )


def _first_frame(data_dir: Path) -> dict[str, object]:
    code = f"SLOW = {SLOW_MODULES!r}\nNAMES = {WINDOW_OBJECT_NAMES!r}\n" + _FIRST_FRAME
    done = _python("-c", code, str(data_dir))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


async def test_first_frame_and_widgets_paint_before_the_engine_loads(tmp_path: Path) -> None:
    shown = await asyncio.to_thread(_first_frame, tmp_path)
    assert shown["loaded"] == []
    assert shown["found"] == list(WINDOW_OBJECT_NAMES)
    assert shown["visible"] is True
    assert shown["send"] == "Send"


async def test_first_frame_speaks_the_saved_language_in_the_saved_theme(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"version": 1, "language": "zh_CN", "theme": "dark"}), encoding="utf-8"
    )
    shown = await asyncio.to_thread(_first_frame, tmp_path)
    assert shown["send"] == "发送"
    assert shown["scheme"] == "dark"
    assert shown["loaded"] == []


async def test_unreadable_settings_still_give_a_first_frame_and_stay_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"version": 1, "language": ')  # cut off mid-write by another program
    shown = await asyncio.to_thread(_first_frame, tmp_path)
    assert shown["visible"] is True and shown["send"] == "Send"
    assert path.read_bytes() == b'{"version": 1, "language": '


async def test_a_window_closed_before_its_controller_arrives_closes_once_it_does(
    tmp_path: Path,
) -> None:
    window = MainWindow(frame_only=True, first_run_dialog=False)
    window.show()
    window.close()  # the person closes it while the engine is still loading
    assert window.isVisible(), "nothing to save yet: the window waits for its controller"
    closed = asyncio.ensure_future(next_signal(window.closed))
    attach_controller(window, tmp_path)
    await closed
    assert window.controller._closed
    assert not window.isVisible()


async def test_every_action_before_the_controller_arrives_is_harmless(
    tmp_path: Path, qtbot: Any
) -> None:
    """Between the widgets (step 2) and the controller (step 3) the window holds a
    placeholder: every action is valid, does nothing, and typed text stays."""
    window = MainWindow(frame_only=True, first_run_dialog=False)
    qtbot.addWidget(window)
    window.build_contents()
    window.show()
    assert not window.controller.ready
    window.composer.setPlainText("Typed before the engine loaded")
    window.send_button.click()
    for action in (
        window.menus.new_action,
        window.menus.rename_action,
        window.menus.delete_action,
        window.menus.settings_action,
        window.menus.find_action,
    ):
        action.trigger()
    window.stop_button.click()
    window.resume_button.click()
    window.commands.load_older()
    window.system_prompt.save_now()
    assert window.open_settings() is None
    assert window.composer.toPlainText() == "Typed before the engine loaded"
    attach_controller(window, tmp_path)
    assert window.controller.ready
    await window.started()
    window.send_button.click()  # now it goes; no provider is set up, so it waits for Resume
    await until(lambda: window.error_banner.isVisible(), what="the no-provider notice")
    assert "No model provider is set up yet" in window.error_banner.toolTip()
    await until(lambda: window.composer.toPlainText() == "", what="the message stored")
    history = await window.controller.storage.load(window.controller.current or "")
    assert [m.content for m in history] == ["Typed before the engine loaded"]
    await close_window(window)


async def test_a_second_launch_brings_the_first_window_forward(tmp_path: Path) -> None:
    data = tmp_path / "data"
    script = tmp_path / "first.smoke"
    script.write_text("mark ready\nwait-activated\nquit 0\n", encoding="utf-8")
    # Popen only starts the process; the reads go through a thread.
    first = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "ui", "--data-dir", str(data), "--smoke-script", str(script)],
        cwd=ROOT,
        env=app_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        await read_until(first, "ready")
        second = await asyncio.to_thread(_python, "-m", "ui", "--data-dir", str(data))
        assert second.returncode == 0, second.stderr
        assert "already open" in second.stdout and str(data.resolve()) in second.stdout
        await read_until(first, "activated")
        assert await asyncio.to_thread(first.wait, 30) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        first.stdout.close()  # type: ignore[union-attr]
    await until(lambda: not (data / "continuo.lock").exists(), what="the lock released")


_SETTLE = """
import asyncio, gc, sys
from PySide6.QtWidgets import QApplication
from ui.app import EventLoop, build_window, settle_after_start
from ui.common.markdown import render_markdown
app = QApplication(sys.argv[:1])
app.setQuitOnLastWindowClosed(False)
async def run():
    window = build_window(sys.argv[1], first_run_dialog=False)
    window.show()
    await settle_after_start(window)
    frozen = gc.get_freeze_count()
    # An unlabeled code block is shown as it is: no lexer is guessed (and none loaded).
    before = {m for m in sys.modules if m.startswith("pygments.lexers.")}
    html = render_markdown("```\\nx = 1 < 2\\n```\\n").html
    after = {m for m in sys.modules if m.startswith("pygments.lexers.")}
    closed = asyncio.Event()
    window.closed.connect(closed.set)
    window.close()
    await closed.wait()
    print(frozen, len(after - before), "x = 1 &lt; 2" in html)
with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
    runner.run(run())
"""


async def test_after_start_up_its_objects_are_frozen_out_of_the_collector(tmp_path: Path) -> None:
    done = await asyncio.to_thread(_python, "-c", _SETTLE, str(tmp_path))
    assert done.returncode == 0, done.stderr
    frozen, lexers_loaded, shown = done.stdout.split()
    # Modules, classes, Qt wrappers and the Markdown tables: tens of thousands of objects
    # that later full collections no longer walk.
    assert int(frozen) > 10_000
    assert lexers_loaded == "0"
    assert shown == "True"

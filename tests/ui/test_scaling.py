"""The window at 200% scaling: on a 1920x1080 screen (960x540 logical pixels) maximised, and at
its minimum size, every part is shown whole, button texts fit, the conversation list (folded
away behind its button at the minimum size) and the composer keep usable widths, and a conversation with a code block, a table and a tool card is
drawn without anything cut off at the side.

Scaling is fixed when a process starts (``QT_SCALE_FACTOR``, and the offscreen platform's
screen from a config file), so the window runs in a fresh interpreter — `probe_main` below —
which prints what it measured as JSON; the tests judge it. Sizes are compared with the fonts'
own metrics, so nothing here assumes a pixel size.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.wait import until
from tests.ui.conftest import app_env

ROOT = Path(__file__).resolve().parents[2]
SCREEN = (1920, 1080)  #: physical pixels; 960x540 logical at 200%

#: DESIGN.md's object names shown in the probe's state (``stopButton`` shows only while an
#: answer streams; its text is measured all the same).
SHOWN = (
    "sessionList",
    "newChatButton",
    "transcript",
    "composer",
    "sendButton",
    "resumeButton",
    "modelPicker",
    "resumeLabel",
    "errorBanner",
    "sessionFilter",
)
#: The conversation list's widgets: folded away in a window too narrow for them beside a
#: readable conversation, where ``sidebarButton`` brings them back.
IN_LIST = ("sessionList", "newChatButton", "sessionFilter")
#: These sit under the last message, inside the transcript, and scroll with it.
IN_TRANSCRIPT = ("resumeButton", "resumeLabel", "errorBanner")

CODE = """```python
import time

def retry(call, attempts=4):
    for n in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(2 ** n)
    # A line wider than the transcript at 200%: it wraps inside the block, not cut off.
    raise RuntimeError("gave up after every attempt; check the network and the provider's address")
```"""

ANSWER = f"""Here is a small **Python** function that retries with exponential backoff:

{CODE}

| attempt | wait |
|---|---|
| 1 | 1 s |
| 2 | 2 s |

It keeps the first error's message."""


# ------------------------------------------------------------------ the probe (subprocess)


async def _seed(data_dir: Path) -> Any:
    from engine import (
        AssistantMessage,
        SQLiteSessionStorage,
        StopInfo,
        StopReason,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from ui.controller import DB_FILE_NAME
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    call = ToolCall(
        "call_1",
        "search_files",
        {"pattern": "backoff", "folder": "~/Documents/notes/2026/march/retry-strategies"},
    )
    cut = StopInfo(
        StopReason.INTERRUPTED,
        raw="network_error",
        message="The connection to the provider broke before the answer finished.",
    )
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="s", title="Backoff helper")
        for message in (
            UserMessage(content="Where did I write about backoff?"),
            AssistantMessage(content="Let me look that up.", tool_calls=(call,)),
            ToolMessage(tool_call_id="call_1", name="search_files", content="notes/03.md"),
            AssistantMessage(content=ANSWER),
            UserMessage(content="And with jitter?"),
            AssistantMessage(content="Add a random part to each wait, so that", stop=cut),
        ):
            await storage.append("s", "seed", message)
        await storage.update_metadata(
            "s",
            {
                "last_error": {
                    "message": "The connection to the provider broke. Check the network.",
                    "action": "settings",
                }
            },
        )
    finally:
        await storage.close()
    store = SettingsStore(data_dir, use_keychain=False)
    config = ProviderConfig(
        id="local",
        kind="openai",
        name="Local model",
        base_url="http://127.0.0.1:9/v1",
        default_model="llama3.1-8b",
    )
    await store.save(Settings(providers=[config], default_provider_id="local"))
    return store


def _rect(widget: Any, window: Any) -> list[int]:
    from PySide6.QtCore import QPoint

    top_left = widget.mapTo(window, QPoint(0, 0))
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def _effective_minimum(widget: Any) -> list[int]:
    # What a layout gives a widget at least: its minimum size where set, else its hint.
    hint = widget.minimumSizeHint()
    return [
        widget.minimumWidth() or max(hint.width(), 0),
        widget.minimumHeight() or max(hint.height(), 0),
    ]


def _button(button: Any) -> dict[str, Any]:
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QPushButton, QStyle, QStyleOptionButton

    content = button.width()
    if isinstance(button, QPushButton):
        option = QStyleOptionButton()
        button.initStyleOption(option)
        content = (
            button.style()
            .subElementRect(QStyle.SubElement.SE_PushButtonContents, option, button)
            .width()
        )
    return {
        "name": button.objectName() or type(button).__name__,
        "text": button.text(),
        "visible": button.isVisible(),
        "advance": QFontMetrics(button.font()).horizontalAdvance(button.text()),
        "content": content,
        "width": button.width(),
        "hint": button.sizeHint().width(),
    }


def _measure(window: Any) -> dict[str, Any]:
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import (
        QAbstractButton,
        QApplication,
        QComboBox,
        QLabel,
        QStyle,
        QStyleOptionComboBox,
        QTextEdit,
        QWidget,
    )

    transcript = window.transcript
    viewport = transcript.viewport()
    metrics = QFontMetrics(window.font())
    widgets = {}
    for name in (*SHOWN, "sidebarButton"):
        widget = window.findChild(QWidget, name)
        widgets[name] = {
            "visible": widget.isVisible(),
            "rect": _rect(widget, window),
            "minimum": _effective_minimum(widget),
            "in_viewport": _rect(widget, viewport) if name in IN_TRANSCRIPT else None,
        }
    buttons = [_button(b) for b in window.findChildren(QAbstractButton) if b.text()]
    picker: QComboBox = window.model_picker
    option = QStyleOptionComboBox()
    picker.initStyleOption(option)
    field = picker.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, picker
    )
    rows = []
    for view in transcript.views():
        texts = [
            {
                "document": t.document().documentLayout().documentSize().width(),
                "viewport": t.viewport().width(),
                "html": t.toHtml(),
                "plain": t.toPlainText(),
            }
            for t in view.findChildren(QTextEdit)
            if t.isVisible()
        ]
        labels = [
            {
                "name": label.objectName(),
                "rect": _rect(label, view),
                "minimum": _effective_minimum(label),
            }
            for label in view.findChildren(QLabel)
            if label.isVisible()
        ]
        rows.append(
            {
                "name": view.objectName(),
                "rect": _rect(view, transcript.widget()),
                "texts": texts,
                "labels": labels,
            }
        )
    app = QApplication.instance()
    screen = window.screen()
    smallest = window.minimumSize().expandedTo(window.minimumSizeHint())
    return {
        "scale": screen.devicePixelRatio(),
        "screen": [screen.geometry().width(), screen.geometry().height()],
        "window": [window.width(), window.height()],
        "window_minimum": [smallest.width(), smallest.height()],
        "grab": [window.grab().width(), window.grab().height()],
        "char": metrics.averageCharWidth(),
        "line": metrics.lineSpacing(),
        "font_pixels": QFontMetrics(app.font()).height(),
        "widgets": widgets,
        "buttons": buttons,
        "picker": {
            "text": picker.currentText(),
            "advance": QFontMetrics(picker.font()).horizontalAdvance(picker.currentText()),
            "field": field.width(),
        },
        "viewport": [viewport.width(), viewport.height()],
        "column": transcript.widget().width(),
        "rows": rows,
    }


async def _probe(data_dir: Path, size: str) -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from ui.app import build_window
    from ui.common.markdown import wait_warm
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    apply_palette(app, "light")  # type: ignore[arg-type]
    # Markdown's libraries load in a worker thread as the first row appears; this test
    # measures the layout of highlighted code, so it lets the loading finish first.
    await asyncio.to_thread(wait_warm, 30)
    store = await _seed(data_dir)
    window = build_window(data_dir, settings_store=store, first_run_dialog=False)
    if size == "maximised":
        window.showMaximized()
    elif size == "minimum":
        window.show()
        window.resize(window.minimumSize().expandedTo(window.minimumSizeHint()))
    else:  # "first": as the first launch opens it, with no saved geometry
        window.show()
    await window.started()
    transcript = window.transcript
    bar = transcript.verticalScrollBar()

    def ready() -> bool:
        return (
            window.model_picker.count() > 0
            and window.resume_button.isVisible()
            and window.error_banner.isVisible()
            and transcript.model() is not None
            and len(transcript.views()) == transcript.model().rowCount() == 6
            and all(v.isVisible() for v in transcript.views())
        )

    closed = asyncio.Event()
    window.closed.connect(closed.set)
    try:
        deadline = asyncio.get_running_loop().time() + 20
        await until(
            ready,
            lambda: (
                "the measured state; the window has "
                f"{window.model_picker.count()} models, "
                f"resume {window.resume_button.isVisible()}, "
                f"error {window.error_banner.isVisible()}, {len(transcript.views())} rows"
            ),
            seconds=20,
        )
        # Measure once the layout is still: the same figures on two turns of the event loop.
        previous: dict[str, Any] | None = None
        while True:
            transcript.flush()
            transcript.scroll_to_bottom()
            await asyncio.sleep(0.02)
            current = _measure(window)
            if current == previous and bar.value() == bar.maximum():
                break
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError("the window's layout did not settle")
            previous = current
        shot = os.environ.get("CONTINUO_PROBE_SHOT")
        if shot:
            window.grab().save(shot)
    finally:
        window.close()  # closes the store, whose thread would keep the process alive
        await closed.wait()
    return current


def probe_main(argv: list[str]) -> int:
    """Run the window over ``argv[0]`` at ``argv[1]`` ("maximised", "minimum" or "first", as a
    first launch opens it); print what it measured as JSON."""
    from PySide6.QtWidgets import QApplication

    from ui.app import EventLoop

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:  # type: ignore[arg-type]
        measured = runner.run(_probe(Path(argv[0]), argv[1]))
    print(json.dumps(measured))
    return 0


# ------------------------------------------------------------------ the tests


def _run_scaled(tmp_path: Path, size: str) -> dict[str, Any]:
    config = tmp_path / "screen.json"
    width, height = SCREEN
    config.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "screen",
                        "x": 0,
                        "y": 0,
                        "width": width,
                        "height": height,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    env = app_env(QT_QPA_PLATFORM=f"offscreen:configfile={config}", QT_SCALE_FACTOR="2")
    code = "import sys; from tests.ui.test_scaling import probe_main; sys.exit(probe_main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "data"), size],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _inside(inner: list[int], outer: list[int]) -> bool:
    x, y, w, h = inner
    return x >= 0 and y >= 0 and x + w <= outer[0] and y + h <= outer[1]


def _check_window(m: dict[str, Any], *, footer_whole: bool) -> None:
    assert m["scale"] == 2.0
    line, char = m["line"], m["char"]
    # Every part is shown, at least as large as it asks to be, and inside the window; the
    # list, or in a window too narrow for it, the button that brings it back.
    folded = not m["widgets"]["sessionList"]["visible"]
    assert m["widgets"]["sidebarButton"]["visible"] == folded
    shown = [n for n in SHOWN if n not in IN_LIST] if folded else list(SHOWN)
    for name in shown if not folded else [*shown, "sidebarButton"]:
        widget = m["widgets"][name]
        x, y, w, h = widget["rect"]
        assert widget["visible"], name
        assert w >= widget["minimum"][0] and h >= widget["minimum"][1], (name, widget)
        if name in IN_TRANSCRIPT:
            # Under the last message: whole across the transcript; scrolled to, whole in it.
            vx, vy, vw, vh = widget["in_viewport"]
            assert vx >= 0 and vx + vw <= m["viewport"][0], (name, widget, m["viewport"])
            if footer_whole:
                assert _inside(widget["in_viewport"], m["viewport"]), (name, widget)
        else:
            assert _inside(widget["rect"], m["window"]), (name, widget, m["window"])
    # Every button's text fits inside its padding.
    for button in m["buttons"]:
        if button["visible"]:
            assert button["advance"] <= button["content"], button
            assert button["width"] >= button["hint"], button
    stop = next(b for b in m["buttons"] if b["name"] == "stopButton")
    assert stop["advance"] <= stop["content"] or stop["hint"] >= stop["advance"], stop
    # Usable widths, in characters of the window's font: conversation titles of a dozen
    # characters, a composer line of a short sentence, three lines of transcript.
    if not folded:
        assert m["widgets"]["sessionList"]["rect"][2] >= 12 * char
        assert m["widgets"]["sessionFilter"]["rect"][2] >= 12 * char
    assert m["widgets"]["composer"]["rect"][2] >= 30 * char
    assert m["widgets"]["composer"]["rect"][3] >= line
    assert m["viewport"][1] >= 3 * line
    # The conversation: a tool card, a code block and a table, nothing cut off at the side.
    names = [row["name"] for row in m["rows"]]
    assert "toolCard" in names
    html = "".join(t["html"] for row in m["rows"] for t in row["texts"])
    plain = "".join(t["plain"] for row in m["rows"] for t in row["texts"])
    assert "def retry(call, attempts=4):" in plain and "attempt" in plain
    assert html.count("<table") >= 2  # the code block's frame and the Markdown table
    for row in m["rows"]:
        x, _, w, _ = row["rect"]
        assert x >= 0 and x + w <= m["column"], row["name"]
        for text in row["texts"]:
            assert text["document"] <= text["viewport"] + 0.5, (row["name"], text["document"])
        for label in row["labels"]:
            lx, _, lw, _ = label["rect"]
            assert lx >= 0 and lx + lw <= w, (row["name"], label)
            assert lw >= label["minimum"][0], (row["name"], label)


async def test_maximised_on_a_1080p_screen_at_200_percent(tmp_path: Path) -> None:
    m = await asyncio.to_thread(_run_scaled, tmp_path, "maximised")
    assert m["screen"] == [SCREEN[0] // 2, SCREEN[1] // 2]
    # Maximised: the whole screen, drawn with twice the pixels.
    assert m["window"][0] >= m["screen"][0] - 2 and m["window"][1] >= m["screen"][1] - 2
    assert m["grab"] == [2 * m["window"][0], 2 * m["window"][1]]
    _check_window(m, footer_whole=True)
    # With room to spare, the chosen model's name is shown whole.
    assert m["picker"]["advance"] <= m["picker"]["field"], m["picker"]


async def test_minimum_size_at_200_percent(tmp_path: Path) -> None:
    m = await asyncio.to_thread(_run_scaled, tmp_path, "minimum")
    # The smallest window still fits the screen, and still shows every part whole.
    assert m["window"][0] <= m["screen"][0] and m["window"][1] <= m["screen"][1]
    assert m["window"] == m["window_minimum"]
    _check_window(m, footer_whole=False)
    # At its narrowest the list is folded away, the conversation keeps the width.
    assert not m["widgets"]["sessionList"]["visible"]


async def test_the_first_launch_fits_a_1080p_screen_at_200_percent(tmp_path: Path) -> None:
    m = await asyncio.to_thread(_run_scaled, tmp_path, "first")
    # No saved size yet: the window opens inside the screen, the composer and Send on it.
    assert m["window"][0] <= m["screen"][0] and m["window"][1] <= m["screen"][1]
    _check_window(m, footer_whole=False)

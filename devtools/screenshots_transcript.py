"""The transcript's states for ``make screenshots`` (`devtools.screenshots` runs them).

``stopped-answer``: an answer just stopped, with its line (model, time) and its Copy /
Regenerate / Branch row at once; ``message-focus``: Alt+Up from the composer, the last message
framed; ``message-menu``: Shift+F10's menu of that message (a popup, shot on its own);
``find-tall-message``: Ctrl+F's match below a 60-line code block, scrolled into view;
``lists-and-tables``: nested bullets under bullets and numbers, and a table with Chinese rows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from engine import AssistantMessage, Usage, UserMessage

__all__ = ["run_transcript_states"]

TALL_CODE = "\n".join(f"    total += weigh(quokka_{n})" for n in range(60))
TALL = (
    f"Here is the whole loop:\n\n```python\ndef census(quokkas):\n    total = 0\n{TALL_CODE}\n"
    "    return total\n```\n\nThe counting follows their **sleeping habits**: they rest by "
    "day in the shade and feed at night, so the census runs at dusk."
)
LISTS = """Setting up the project takes three steps:

1. **Install** the tools
   - Python 3.11 or later
   - `uv` for the environment
2. **Configure** the provider
   - its address
   - its key, kept in the keychain
3. Run `make run`

- Fruit
  - apples
    - green ones keep longest
  - pears
- Vegetables

| name | 名字 | stock |
|---|---|---:|
| apple | 苹果很好吃 | 12 |
| pear | pear | 7 |
| 中文 | 中文内容 | 三 |
"""


async def _picture(window: Any, path: Path) -> None:
    window.transcript.flush()
    await asyncio.sleep(0.05)  # let layout settle and paint; a picture, not synchronisation
    window.grab().save(str(path))
    print(f"wrote {path}")


async def run_transcript_states(data: Path, out: Path) -> None:
    """Render the transcript's states into ``out`` over data folders under ``data``."""
    from devtools.screenshots import _close, _Scripted, _seed, _until, _window

    # Stopped: the model holds mid-answer; Stop, and the row shows its line and actions.
    model = _Scripted(
        "Exponential backoff doubles the wait after each failure: 1 s, 2 s, 4 s, and so on "
        "until a ceiling. Add jitter so that many clients do not retry in step.",
        hold=6,
    )
    window = await _window(data / "stopped", model)
    window.composer.setPlainText("What is exponential backoff?")
    window.send_button.click()
    await model.held.wait()
    window.stop_button.click()
    await _until(
        lambda: _last_answer(window) is not None and _last_answer(window).key[:5] != "live:"
    )
    await _until(lambda: window.transcript.message_views()[-1].actions_bar.meta.isVisible())
    await _picture(window, out / "stopped-answer.png")
    model.release.set()
    await _close(window)

    # Keyboard: Alt+Up from the composer frames the last message; Shift+F10 opens its menu.
    usage = Usage(input_tokens=40, output_tokens=58)
    await _seed(
        data / "keys",
        "s-keys",
        "Docs",
        [
            UserMessage(content="Where is the manual?"),
            AssistantMessage(
                content="In [the manual](https://example.com/manual), part two, under *Providers*.",
                model="llama3.1-8b",
                usage=usage,
            ),
        ],
    )
    window = await _window(data / "keys", _Scripted("Done."))
    await _until(lambda: len(window.transcript.message_views()) == 2)
    window.activateWindow()
    window.composer.setFocus()
    QTest.keyClick(window.composer, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    await _until(lambda: window.transcript.focused_message() is not None)
    await _picture(window, out / "message-focus.png")
    view = window.transcript.focused_message()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    await _until(lambda: getattr(view, "context_menu", None) is not None)
    menu = view.context_menu
    await _until(menu.isVisible)
    await asyncio.sleep(0.05)  # a picture, not synchronisation
    menu.grab().save(str(out / "message-menu.png"))
    print(f"wrote {out / 'message-menu.png'}")
    menu.close()
    await _close(window)

    # Ctrl+F: the match below a tall code block is on screen, not the block's top.
    await _seed(
        data / "tall",
        "s-tall",
        "Quokka census",
        [UserMessage(content="How do I count quokkas?"), AssistantMessage(content=TALL)],
    )
    window = await _window(data / "tall", _Scripted("Done."))
    await _until(lambda: len(window.transcript.message_views()) == 2)
    window.transcript.verticalScrollBar().setValue(0)
    window.search.open_find()
    window.find_bar.field.setText("habits")
    window.find_bar.flush()
    await _until(lambda: window.find_bar.count.text() == "1 of 1")
    await _until(lambda: window.transcript.marked_view() is not None)
    await asyncio.sleep(0.1)  # the row's layout settles over a few turns; a picture
    await _picture(window, out / "find-tall-message.png")
    await _close(window)

    # Lists and tables as the HTML export shows them.
    await _seed(
        data / "lists",
        "s-lists",
        "Project setup",
        [UserMessage(content="How do I set it up?"), AssistantMessage(content=LISTS)],
    )
    window = await _window(data / "lists", _Scripted("Done."))
    await _until(lambda: len(window.transcript.message_views()) == 2)
    await _picture(window, out / "lists-and-tables.png")
    await _close(window)


def _last_answer(window: Any) -> Any:
    from ui.conversation.items import ItemKind

    model = window.transcript.model()
    answers = [i for i in model.items() if i.kind is ItemKind.ASSISTANT] if model else []
    return answers[-1] if answers else None

"""The screenshots of the File menu's archive actions and of the search list's hits, for
``make screenshots`` (`devtools.screenshots` calls `run_archive_states`), or alone:
``python -m devtools.archive_shots OUTDIR``.

States, each driven on a real window as a person would (only the file chosen is given, as the
tests give it, except in ``export-file-dialog``, which shows Qt's own dialog):

* ``export-file-dialog``: the file dialog Export… opens, in Documents (or home), offering the
  three formats with the chosen one selected;
* ``export-format-followed`` (and ``-zh``): JSON chosen in the list, ``all.html`` typed: a
  page is written, and the report says why;
* ``restore-not-a-backup`` (and ``-zh``): a text file chosen to restore: "not a Continuo
  backup", nothing changed;
* ``search-long-title`` (and ``-zh``): a hit with a long title on another version at the
  default sidebar width: the title elides, never the date or the note.

A dialog is drawn over the window it belongs to, as a person sees it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtGui import QColor, QPainter, QPixmap  # noqa: E402
from PySide6.QtWidgets import QApplication, QPushButton, QWidget  # noqa: E402

from engine import AssistantMessage, SQLiteSessionStorage, UserMessage  # noqa: E402

__all__ = ["main", "run_archive_states"]

LONG_TITLE = "Explain quokka habits in the wild, at night and in captivity"


def _over(window: QWidget, dialog: QWidget, path: Path) -> None:
    """Save ``window`` with ``dialog`` drawn over its middle."""
    picture = window.grab()
    top = dialog.grab()
    painter = QPainter(picture)
    painter.fillRect(picture.rect(), QColor(0, 0, 0, 60))  # the window behind, dimmed
    where = QPoint(
        max(0, (picture.width() - top.width()) // 2), max(0, (picture.height() - top.height()) // 3)
    )
    painter.drawPixmap(where, top)
    painter.setPen(QColor(0, 0, 0, 110))  # offscreen there is no window frame: draw an edge
    painter.drawRect(where.x() - 1, where.y() - 1, top.width() + 1, top.height() + 1)
    painter.end()
    QPixmap(picture).save(str(path))
    print(f"wrote {path}")


async def _seed(data: Path) -> None:
    from ui.controller import DB_FILE_NAME

    storage = SQLiteSessionStorage(data / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="trip", title="Weekend in Oslo")
        await storage.append("trip", "seed", UserMessage(content="What should I pack?"))
        await storage.append(
            "trip", "seed", AssistantMessage(content="Layers, and shoes with grip.")
        )
        await storage.create_session(session_id="quokka", title=LONG_TITLE)
        ask = UserMessage(content="Where do quokkas sleep?")
        await storage.append("quokka", "seed", ask)
        await storage.append(
            "quokka", "seed", AssistantMessage(content="Quokkas rest in dense thickets by day.")
        )
        await storage.branch_from("quokka", ask.id)
        await storage.append(
            "quokka", "seed", AssistantMessage(content="Under shrubs; a quokka rarely digs.")
        )
    finally:
        await storage.close()


async def _report(window: Any, trigger: Any, answer: Any = None) -> Any:
    """Trigger an archive action, answer its choices with ``answer``; the report box."""
    from devtools.screenshots import _until

    actions = window.menus.archive_actions
    trigger()
    if answer is not None:
        await answer(actions)
    await _until(lambda: actions.report is not None and actions.report.isVisible(), 30)
    await asyncio.sleep(0.05)  # a picture, not synchronisation
    return actions.report


async def _states(root: Path, out: Path, suffix: str) -> None:
    from devtools.screenshots import _close, _Scripted, _shot, _until, _window
    from ui.archive import ExportDialog

    data = root / f"data{suffix}"
    await _seed(data)
    files = root / f"files{suffix}"
    files.mkdir()
    window = await _window(data, _Scripted("Done."))
    actions = window.menus.archive_actions

    # JSON chosen in the list, "all.html" typed.
    actions.choose_path = lambda _purpose, _suggested: files / "all.html"

    async def all_as_json(actions: Any) -> None:
        await _until(lambda: isinstance(actions.dialog, ExportDialog) and actions.dialog.isVisible())
        actions.dialog.all_conversations.setChecked(True)
        actions.dialog.choose_format("json")
        actions.dialog.findChild(QPushButton, "exportOkButton").click()

    box = await _report(window, actions.export_action.trigger, all_as_json)
    _over(window, box, out / f"export-format-followed{suffix}.png")
    box.done(0)

    # A text file chosen to restore.
    text = files / "notes.txt"
    text.write_text("Shopping list\n- milk\n- bread\n", encoding="utf-8")
    actions.choose_path = lambda _purpose, _suggested: text
    box = await _report(window, actions.restore_action.trigger)
    _over(window, box, out / f"restore-not-a-backup{suffix}.png")
    box.done(0)

    # A hit with a long title, on another version, at the default sidebar width.
    window.session_filter.setText("quokka")
    window.search.flush()
    await _until(lambda: window.search.searched == "quokka" and window.search_results.isVisible())
    await _shot(window, out / f"search-long-title{suffix}.png")
    window.session_filter.clear()

    if not suffix:  # Qt's own file dialog, as Export… opens it (words are Qt's)
        from PySide6.QtWidgets import QFileDialog

        actions.choose_path = actions.ui.ask_for_path

        async def as_html(actions: Any) -> None:
            await _until(lambda: isinstance(actions.dialog, ExportDialog) and actions.dialog.isVisible())
            actions.dialog.all_conversations.setChecked(True)
            actions.dialog.choose_format("html")
            actions.dialog.findChild(QPushButton, "exportOkButton").click()

        from ui.common import file_dialogs

        actions.ui.folder = None
        file_dialogs._LAST.clear()  # as on a first export: Documents, or home without one
        actions.export_action.trigger()
        await as_html(actions)
        await _until(
            lambda: (d := window.findChild(QFileDialog, "archiveFileDialog")) is not None
            and d.isVisible()
        )
        dialog = window.findChild(QFileDialog, "archiveFileDialog")
        await asyncio.sleep(0.2)  # the folder's listing fills in: a picture, not synchronisation
        _over(window, dialog, out / "export-file-dialog.png")
        dialog.reject()
    await _close(window)


async def run_archive_states(root: Path, out: Path) -> None:
    """Render the states above into ``out`` (English, then Chinese), over data in ``root``."""
    from ui.common.i18n import install_translator
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_palette(app, "light")
    install_translator(app, "en")
    await _states(root, out, "")
    install_translator(app, "zh_CN")
    try:
        await _states(root, out, "-zh")
    finally:
        install_translator(app, "en")


def main(argv: list[str] | None = None) -> int:
    """Render only these states into the folder given on the command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from devtools.screenshots import _warm
    from ui.app import EventLoop

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)

    async def run() -> int:
        await _warm()
        with tempfile.TemporaryDirectory() as tmp:
            await run_archive_states(Path(tmp), out)
        return 0

    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:  # type: ignore[arg-type]
        return runner.run(run())


if __name__ == "__main__":
    sys.exit(main())

"""Help › About: Continuo's version, where it keeps its data, and the licences of what it bundles.

The version and the licences come from the installed distributions' metadata
(`importlib.metadata`, which reads many small files: tens of milliseconds), so they are read in
a worker thread after the dialog is on screen; until then it says "Reading…". The list of
bundled parts is what Continuo's own requirements pull in, followed recursively, plus Qt
(through PySide6) and Python itself.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..common.dialog_buttons import Standard, button_row

__all__ = ["AboutDialog", "Bundled", "bundled_parts"]

log = logging.getLogger(__name__)

_DISTRIBUTION = "continuo"


@dataclass(frozen=True, slots=True)
class Bundled:
    """One part Continuo ships with: its name, version and licence (as its metadata says)."""

    name: str
    version: str
    licence: str


def _licence(metadata: Any) -> str:
    """The licence a distribution declares: its SPDX expression, a short License field, or
    the trove classifier's name."""
    expression = metadata.get("License-Expression")
    if expression:
        return str(expression)
    field = str(metadata.get("License") or "").strip()
    if field and len(field) <= 80 and "\n" not in field:
        return field
    for classifier in metadata.get_all("Classifier") or []:
        if classifier.startswith("License :: "):
            return str(classifier).rsplit(" :: ", 1)[-1]
    return "?"


def bundled_parts(root: str = _DISTRIBUTION) -> tuple[str, list[Bundled]]:
    """Continuo's version and every distribution it requires (recursively), sorted by name.

    Slow (reads metadata files): call it off the GUI thread.
    """
    from importlib import metadata

    seen: dict[str, Bundled] = {}
    version = ""

    def visit(name: str) -> None:
        nonlocal version
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return
        key = re.sub(r"[-_.]+", "-", str(dist.metadata["Name"])).lower()
        if key in seen:
            return
        if key == root:
            version = dist.version
            seen[key] = Bundled("Continuo", dist.version, _licence(dist.metadata))
        else:
            seen[key] = Bundled(str(dist.metadata["Name"]), dist.version, _licence(dist.metadata))
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue  # optional parts (tests, development) are not bundled
            visit(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0])

    visit(root)
    parts = [b for k, b in seen.items() if k != root]
    from PySide6 import QtCore

    # Qt's libraries come inside PySide6's wheels under the same licence.
    parts.append(Bundled("Qt", QtCore.qVersion(), "LGPL-3.0-only"))
    parts.append(Bundled("Python", sys.version.split()[0], "PSF-2.0"))
    parts.sort(key=lambda b: b.name.lower())
    return version, parts


class AboutDialog(QDialog):
    """The About dialog (objectName ``aboutDialog``); reads its facts in a worker thread."""

    def __init__(
        self,
        data_dir: str | Path | None,
        parent: QWidget | None = None,
        spawn: Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any] | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.parts: list[Bundled] | None = None  # None until read
        self.version = QApplication.applicationVersion() or ""
        layout = QVBoxLayout(self)
        self.heading = QLabel(self)
        self.heading.setObjectName("aboutHeading")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        font = self.heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.heading.setFont(font)
        layout.addWidget(self.heading)
        form = QFormLayout()
        self.version_label = QLabel(self)
        self.version_label.setObjectName("aboutVersion")
        self.version_label.setTextFormat(Qt.TextFormat.PlainText)
        self.version_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_label = QLabel(self)
        self.folder_label.setObjectName("aboutDataFolder")
        self.folder_label.setTextFormat(Qt.TextFormat.PlainText)
        self.folder_label.setWordWrap(True)
        self.folder_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.folder_label.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._version_caption = QLabel(self)
        self._folder_caption = QLabel(self)
        form.addRow(self._version_caption, self.version_label)
        form.addRow(self._folder_caption, self.folder_label)
        layout.addLayout(form)
        self._licences_caption = QLabel(self)
        layout.addWidget(self._licences_caption)
        # A read-only text box: selectable, scrollable and reachable with Tab.
        self.licences = QPlainTextEdit(self)
        self.licences.setObjectName("aboutLicences")
        self.licences.setReadOnly(True)
        self.licences.setTabChangesFocus(True)
        self.licences.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.licences.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._licences_caption.setBuddy(self.licences)
        layout.addWidget(self.licences, 1)
        self.buttons = button_row(self, {Standard.Close: ""})
        layout.addWidget(self.buttons)
        self.resize(560, 480)
        self.retranslate()
        self._task: asyncio.Task[Any] | None = None
        try:
            # The window's controller owns the task when given (it is waited for at close).
            self._task = (
                spawn(self._read(), "about") if spawn else asyncio.ensure_future(self._read())
            )
        except RuntimeError:  # no running loop (a plain script): read it here
            self._show_parts(*bundled_parts())

    async def _read(self) -> None:
        try:
            version, parts = await asyncio.to_thread(bundled_parts)
        except Exception as exc:  # metadata that cannot be read: say so, do not fail
            log.warning("bundled parts not read: %s", exc)
            version, parts = self.version, []
        self._show_parts(version, parts)

    async def wait_read(self) -> None:
        """Wait until the version and licences are shown (tests)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    def _show_parts(self, version: str, parts: list[Bundled]) -> None:
        try:
            self.version = version or self.version
            self.parts = parts
            self.retranslate()
        except RuntimeError:  # closed (and deleted) before the read finished
            pass

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("About Continuo"))
        self.heading.setText(self.tr("Continuo"))
        self._version_caption.setText(self.tr("Version:"))
        self._folder_caption.setText(self.tr("Data folder:"))
        self._licences_caption.setText(self.tr("&Bundled software and licences:"))
        self.version_label.setText(self.version or self.tr("Reading…"))
        self.version_label.setAccessibleName(self.tr("Version"))
        folder = str(self.data_dir) if self.data_dir is not None else self.tr("Not known")
        self.folder_label.setText(folder)
        self.folder_label.setAccessibleName(self.tr("Data folder"))
        self.licences.setAccessibleName(self.tr("Bundled software and licences"))
        if self.parts is None:
            self.licences.setPlainText(self.tr("Reading…"))
        else:
            width = max((len(p.name) for p in self.parts), default=0)
            vwidth = max((len(p.version) for p in self.parts), default=0)
            lines = [
                f"{p.name.ljust(width)}  {p.version.ljust(vwidth)}  {p.licence}" for p in self.parts
            ]
            self.licences.setPlainText("\n".join(lines))

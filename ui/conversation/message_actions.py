"""The line under a message: its versions ("‹ 2/3 ›"), what wrote it, and what can be done.

`MessageActions` (objectName ``messageActions``) sits at the bottom of a user message or an
answer. From left to right: the version switcher (``previousVersion``, ``versionLabel``,
``nextVersion``; shown only for a message that has siblings), for an answer a quiet line
saying the model, the time, the tokens and, for an answer that just arrived, tokens a second
(``answerMeta``), then the actions: Copy message (``copyMessageButton``), Regenerate
(``regenerateButton``, on every answer), Edit (``editButton``, on what
the person wrote) and Branch into a new chat (``branchButton``). The same actions are in the
message's context menu (`menu_actions`), so the keyboard reaches them too.

Regenerate's arrow opens "Regenerate with" and the models of the header's picker
(``choices_source``, set by the transcript): ``"regenerate_with:N"`` names the picker's Nth.

It only draws and announces: ``triggered(action)`` with ``"previous"``, ``"next"``,
``"copy"``, ``"regenerate"``, ``"regenerate_with:N"``, ``"edit"`` or ``"branch"``; the row
view passes it on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QVBoxLayout, QWidget

from ..common.eliding_label import ElidingLabel
from .items import ItemKind, ItemState, TranscriptItem

__all__ = ["MessageActions"]


class MessageActions(QWidget):
    """The versions, the answer's line and the actions of one message."""

    triggered = Signal(str)

    def __init__(self, kind: ItemKind, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageActions")
        self.kind = kind
        # One line; in a row too narrow for it, the actions go to a second line under the
        # versions and the answer's line (`_arrange`), so none is drawn past the edge.
        lines = QVBoxLayout(self)
        lines.setContentsMargins(0, 0, 0, 0)
        lines.setSpacing(0)
        self._line = line = QHBoxLayout()
        self._second = QHBoxLayout()
        for each in (line, self._second):
            each.setContentsMargins(0, 0, 0, 0)
            each.setSpacing(2)
            lines.addLayout(each)
        self._second.addStretch(1)
        self.two_lines = False
        self.previous = self._button("previousVersion", "previous")
        self.version_label = QLabel(self)
        self.version_label.setObjectName("versionLabel")
        self.next = self._button("nextVersion", "next")
        self.previous.setText("‹")
        self.next.setText("›")
        self.meta = ElidingLabel(self)  # the model's name gives way first
        self.meta.setObjectName("answerMeta")
        self.meta.setTextFormat(Qt.TextFormat.PlainText)  # a model's name is outside text
        self.meta.setStyleSheet("color: palette(placeholder-text);")
        self.copy = self._button("copyMessageButton", "copy")
        self.regenerate = self._button("regenerateButton", "regenerate")
        # the models the picker offers, by label (the transcript sets it), for the arrow
        self.choices_source: Callable[[], list[str]] | None = None
        self.models_menu = QMenu(self.regenerate)
        self.models_menu.setObjectName("regenerateWithMenu")
        self.models_menu.aboutToShow.connect(self._fill_models)
        self.regenerate.setMenu(self.models_menu)
        self.regenerate.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.edit = self._button("editButton", "edit")
        self.branch = self._button("branchButton", "branch")
        for widget in (self.previous, self.version_label, self.next, self.meta):
            line.addWidget(widget)
        line.addStretch(1)
        for widget in (self.copy, self.regenerate, self.edit, self.branch):
            line.addWidget(widget)
        self.edit.setVisible(kind is ItemKind.USER)
        self.regenerate.hide()
        self._set_versions(None)
        self.meta.hide()
        self._item: TranscriptItem | None = None
        self.retranslate()

    def _buttons(self) -> list[QWidget]:
        return [self.copy, self.regenerate, self.edit, self.branch]

    def _line_width(self, widgets: list[QWidget], hint: bool = True) -> int:
        shown = [w for w in widgets if not w.isHidden()]
        sizes = [(w.sizeHint() if hint else w.minimumSizeHint()).width() for w in shown]
        return sum(sizes) + self._line.spacing() * max(len(shown) - 1, 0)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """As narrow as the wider of its two lines (the answer's line cut short): never the
        one line's whole width, which made narrow windows cut the row off."""
        size = super().minimumSizeHint()
        first = [self.previous, self.version_label, self.next, self.meta]
        narrowest = max(self._line_width(first, hint=False), self._line_width(self._buttons()))
        size.setWidth(narrowest)
        return size

    def _arrange(self) -> None:
        """Put the actions on the versions' line when it has room for all, else under it."""
        first = [self.previous, self.version_label, self.next, self.meta]
        spacing = 16  # the stretch between the line's two sides, at its narrowest
        one_line = self._line_width(first) + spacing + self._line_width(self._buttons())
        two = self.width() < one_line
        if two == self.two_lines:
            return
        self.two_lines = two
        source, target = (self._line, self._second) if two else (self._second, self._line)
        for button in self._buttons():
            source.removeWidget(button)
            target.addWidget(button)
        self.updateGeometry()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange()

    def _button(self, name: str, action: str) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName(name)
        button.setAutoRaise(True)
        # Not a Tab stop each (a long conversation would be hundreds of them): the keyboard
        # reaches them through the focused message's menu (`TranscriptView`).
        button.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        button.setStyleSheet("QToolButton { color: palette(placeholder-text); }")
        button.clicked.connect(lambda _=False, action=action: self.triggered.emit(action))
        return button

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.previous.setToolTip(self.tr("Previous version"))
        self.previous.setAccessibleName(self.tr("Previous version"))
        self.next.setToolTip(self.tr("Next version"))
        self.next.setAccessibleName(self.tr("Next version"))
        self.copy.setText(self.tr("Copy"))
        self.copy.setToolTip(self.tr("Copy the whole message (its Markdown)"))
        self.copy.setAccessibleName(self.tr("Copy message"))
        self.regenerate.setText(self.tr("Regenerate"))
        self.regenerate.setToolTip(self.tr("Write another answer; this one stays as a version"))
        self.edit.setText(self.tr("Edit"))
        self.edit.setToolTip(self.tr("Change this message and send it again as a new version"))
        self.branch.setText(self.tr("Branch"))
        self.branch.setToolTip(
            self.tr("Branch into a new chat: a copy of the conversation up to here")
        )
        self.branch.setAccessibleName(self.tr("Branch into a new chat"))
        if self._item is not None:
            self.show_for(self._item)

    def _fill_models(self) -> None:
        """Fill "Regenerate with" as it opens: the models the picker offers now."""
        self.models_menu.clear()
        heading = self.models_menu.addAction(self.tr("Regenerate with"))
        heading.setEnabled(False)
        labels = self.choices_source() if self.choices_source is not None else []
        for index, label in enumerate(labels):
            # a model's name, as text: "&" is a letter here, not a shortcut
            entry = self.models_menu.addAction(label.replace("&", "&&"))
            entry.setObjectName(f"regenerateWith_{index}")
            entry.triggered.connect(
                lambda _=False, index=index: self.triggered.emit(f"regenerate_with:{index}")
            )
        if not labels:
            self.models_menu.addAction(self.tr("No other model is set up")).setEnabled(False)

    def show_for(self, item: TranscriptItem) -> None:
        """Draw for ``item`` (Regenerate on any answer: it answers its own question again)."""
        self._item = item
        live = item.key.startswith("live:") or item.state is ItemState.STREAMING
        self._set_versions(None if live else item.versions)
        for button in (self.copy, self.branch):
            button.setVisible(not live)
        self.edit.setVisible(item.kind is ItemKind.USER and not live)
        self.regenerate.setVisible(item.kind is ItemKind.ASSISTANT and not live)
        meta = self.meta_text(item) if item.kind is ItemKind.ASSISTANT and not live else ""
        self.meta.setText(meta)
        self.meta.setVisible(bool(meta))
        self._arrange()

    def _set_versions(self, versions: tuple[int, int] | None) -> None:
        shown = versions is not None
        for widget in (self.previous, self.version_label, self.next):
            widget.setVisible(shown)
        if versions is None:
            return
        index, count = versions
        self.version_label.setText(f"{index + 1}/{count}")
        self.version_label.setAccessibleName(
            self.tr("Version {n} of {count}").format(n=index + 1, count=count)
        )
        self.previous.setEnabled(index > 0)
        self.next.setEnabled(index < count - 1)

    def meta_text(self, item: TranscriptItem) -> str:
        """ "model · 14:02 · 312 tokens · 41 tokens/s" (each part only when known)."""
        parts: list[str] = []
        if item.model:
            parts.append(item.model)
        if item.created_at:
            parts.append(_when(item.created_at))
        if item.output_tokens:
            parts.append(self.tr("{count} tokens").format(count=item.output_tokens))
            if item.seconds and item.seconds > 0.05:
                rate = item.output_tokens / item.seconds
                parts.append(self.tr("{rate} tokens/s").format(rate=f"{rate:.0f}"))
        return " · ".join(parts)

    def menu_actions(self, parent: QWidget) -> list[QAction]:
        """The shown actions as menu entries (for the message's context menu)."""
        actions: list[QAction] = []
        for button, action in (
            (self.copy, "copy"),
            (self.regenerate, "regenerate"),
            (self.edit, "edit"),
            (self.branch, "branch"),
            (self.previous, "previous"),
            (self.next, "next"),
        ):
            if not button.isVisible() or not button.isEnabled():
                continue
            text = button.accessibleName() or button.text()
            entry = QAction(text, parent)
            entry.setObjectName(f"{action}MessageAction")
            entry.triggered.connect(lambda _=False, action=action: self.triggered.emit(action))
            actions.append(entry)
        return actions


def _when(created_at: float) -> str:
    """The time for today's messages; the date too for older ones (an imported history)."""
    from PySide6.QtCore import QDateTime

    from ..common.dates import short_date

    when = QDateTime.fromSecsSinceEpoch(int(created_at))
    clock = time.strftime("%H:%M", time.localtime(created_at))
    if when.date() == QDateTime.currentDateTime().date():
        return clock
    return f"{short_date(created_at)} {clock}"  # the person's locale's format, as search's

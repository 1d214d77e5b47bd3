"""The header's Tools button: which MCP servers' tools this conversation is offered.

`ToolServerButton` (objectName ``toolServersButton``) opens a menu with one check box per
enabled server (``toolServer_<name>`` actions; checked: its tools are offered) and "Set up
tools…", which opens Settings › Tools. It is hidden while no server is enabled, so a person
who never set one up sees nothing of it. Its text says how many servers are offered when
not all are ("Tools 1/2"). It draws only; the window keeps the choice in the conversation's
metadata (`Controller.offer_server`).

Qt's styles draw an instant-popup tool button's menu arrow in its bottom-right corner without
making room for it (only a split "menu button" gets room), so the arrow landed on the last
letter of "Tools": the button is made wider by the arrow's width and its label is drawn left
of the arrow (`sizeHint`, `paintEvent`).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QSize, Signal
from PySide6.QtGui import QAction, QPaintEvent
from PySide6.QtWidgets import (
    QMenu,
    QStyle,
    QStyleOptionToolButton,
    QStylePainter,
    QToolButton,
    QWidget,
)

__all__ = ["ToolServerButton"]


class ToolServerButton(QToolButton):
    """The Tools button and its menu (see the module docstring)."""

    offerChanged = Signal(str, str, bool)  # noqa: N815 — (session id, server, offered)
    setupRequested = Signal()  # noqa: N815 — "Set up tools…"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolServersButton")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu_ = QMenu(self)
        self.menu_.setObjectName("toolServersMenu")
        self.setMenu(self.menu_)
        self._names: list[str] = []
        self._offered: set[str] = set()
        self.session_id = ""  # the conversation the menu shows the choice of
        self._deferred: tuple[list[str], list[str], str] | None = None  # while it is open
        self.menu_.aboutToHide.connect(self._apply_deferred)
        self._actions: dict[str, QAction] = {}
        self.setup_action = QAction(self)
        self.setup_action.setObjectName("toolServersSetup")
        self.setup_action.triggered.connect(lambda: self.setupRequested.emit())
        self.setVisible(False)
        self.retranslate()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _arrow_width(self, option: QStyleOptionToolButton) -> int:
        return self.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, option, self)

    def sizeHint(self) -> QSize:  # noqa: N802
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        hint = super().sizeHint()
        return QSize(hint.width() + self._arrow_width(option), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        """The style's button and arrow, then the label in the room left of the arrow."""
        painter = QStylePainter(self)
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        label = option.text
        option.text = ""
        painter.drawComplexControl(QStyle.ComplexControl.CC_ToolButton, option)
        option.text = label
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, option, self)
        option.rect = self.rect().adjusted(margin // 2, 0, -self._arrow_width(option), 0)
        painter.drawControl(QStyle.ControlElement.CE_ToolButtonLabel, option)

    def retranslate(self) -> None:
        count, total = len(self._offered), len(self._names)
        if total and count < total:
            self.setText(self.tr("Tools {count}/{total}").format(count=count, total=total))
        else:
            self.setText(self.tr("Tools"))
        self.setToolTip(self.tr("Which tool servers this conversation may use"))
        self.setAccessibleName(
            self.tr("Tools: {count} of {total} servers offered").format(count=count, total=total)
        )
        self.setup_action.setText(self.tr("Set up tools…"))
        for name, action in self._actions.items():
            action.setToolTip(self.tr("Offer the tools of {server} here").format(server=name))

    def set_servers(self, names: Sequence[str], offered: Sequence[str], session_id: str) -> None:
        """Show these servers, ``offered`` checked, for conversation ``session_id`` (""
        while none is open: the button is then disabled, there is nowhere to keep a choice).

        The same servers only change their check marks; other servers while the menu is
        open wait until it closes (its entries never move under the pointer).
        """
        names, offered = list(names), [n for n in offered if n in names]
        if names == self._names and self._actions:
            self.session_id = session_id
            self._offered = set(offered)
            for name, action in self._actions.items():
                action.blockSignals(True)
                action.setChecked(name in self._offered)
                action.blockSignals(False)
            self.setEnabled(bool(session_id))
            self.retranslate()
            return
        if self.menu_.isVisible():
            self._deferred = (names, offered, session_id)
            return
        self.session_id = session_id
        self._names, self._offered = names, set(offered)
        self.menu_.clear()
        self._actions = {}
        for name in self._names:
            # A server's name as the person wrote it: "&" is a letter here, not a shortcut.
            action = QAction(name.replace("&", "&&"), self.menu_)
            action.setObjectName(f"toolServer_{name}")
            action.setCheckable(True)
            action.setChecked(name in self._offered)
            action.toggled.connect(lambda on, name=name: self._toggled(name, on))
            self.menu_.addAction(action)
            self._actions[name] = action
        self.menu_.addSeparator()
        self.menu_.addAction(self.setup_action)
        self.setVisible(bool(self._names))
        self.setEnabled(bool(session_id))
        self.retranslate()

    def _apply_deferred(self) -> None:
        deferred, self._deferred = self._deferred, None
        if deferred is not None:
            self.set_servers(*deferred)

    def offered(self) -> list[str]:
        """The servers checked now, in order."""
        return [n for n in self._names if n in self._offered]

    def action_for(self, name: str) -> QAction | None:
        return self._actions.get(name)

    def _toggled(self, name: str, on: bool) -> None:
        if on:
            self._offered.add(name)
        else:
            self._offered.discard(name)
        self.retranslate()
        self.offerChanged.emit(self.session_id, name, on)

"""The model picker (objectName ``modelPicker``): a combo box that fits the narrowest window.

A model's label ("qwen2.5-coder-32b-instruct — Local model") is often wider than the room the
header has at the window's minimum width; a plain combo box cut it at its right edge, losing
the provider's name. This one elides the middle of the shown label, shows the whole label in
its tooltip, and opens a list wide enough for every label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import (
    QComboBox,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QToolTip,
    QWidget,
)

if TYPE_CHECKING:
    from ..settings.model_catalog import ModelChoice

__all__ = ["ModelPicker"]


class ModelPicker(QComboBox):
    """A combo box whose shown label is elided in the middle to fit (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelPicker")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(16)
        model = self.model()
        model.rowsInserted.connect(self._fit_popup)
        model.rowsRemoved.connect(self._fit_popup)
        model.modelReset.connect(self._fit_popup)

    def set_choices(self, choices: Sequence[ModelChoice], current: ModelChoice | None) -> None:
        """Offer ``choices`` (each one's label shown, the choice its data), ``current`` picked
        (none when it is not offered); nothing is announced as picked."""
        self.blockSignals(True)
        self.clear()
        for choice in choices:
            self.addItem(choice.label, choice)
        if current is not None and current in choices:
            self.setCurrentIndex(list(choices).index(current))
        else:
            self.setCurrentIndex(-1)
        self.blockSignals(False)

    def sizeHint(self) -> QSize:  # noqa: N802
        # As wide as the longest label when there is room (the layout shrinks it when not).
        hint = super().sizeHint()
        widest = max(
            (self.fontMetrics().horizontalAdvance(self.itemText(i)) for i in range(self.count())),
            default=0,
        )
        return QSize(max(hint.width(), widest + 48), hint.height())

    def _fit_popup(self, *_args: Any) -> None:
        widest = max(
            (self.fontMetrics().horizontalAdvance(self.itemText(i)) for i in range(self.count())),
            default=0,
        )
        self.view().setMinimumWidth(widest + 40)
        self.updateGeometry()

    def shown_text(self) -> str:
        """The current label as drawn: elided in the middle to the room the box has."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        room = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return self.fontMetrics().elidedText(
            self.currentText(), Qt.TextElideMode.ElideMiddle, max(room.width() - 4, 0)
        )

    def full_tooltip(self) -> str:
        """The tooltip: the whole current label, then what the box is for."""
        parts = [self.currentText(), self.toolTip()]
        return "\n".join(p for p in parts if p)

    def paintEvent(self, _event: Any) -> None:  # noqa: N802
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.currentText = self.shown_text()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            QToolTip.showText(event.globalPos(), self.full_tooltip(), self)
            return True
        return super().event(event)

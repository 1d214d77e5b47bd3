"""The row above the conversation: the model that answers, the system prompt's button, the tool
servers offered, and Settings (objectNames ``modelPicker``, ``systemPromptToggle``,
``toolServerButton``, ``settingsButton``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from ..conversation.model_picker import ModelPicker
from ..tools.tool_server_menu import ToolServerButton

__all__ = ["ConversationHeader"]


class ConversationHeader(QWidget):
    """The header of the shown conversation (its widgets are made in the order Tab visits)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.model_picker = ModelPicker(self)  # fits the narrowest window (elides)
        #: shows the system prompt (`ui.conversation.system_prompt.SystemPromptEditor` runs it)
        self.prompt_toggle = QToolButton(self)
        self.settings_button = QToolButton(self)
        self.settings_button.setObjectName("settingsButton")
        # which MCP servers' tools this conversation is offered (hidden without servers)
        self.tool_server_button = ToolServerButton(self)
        for widget in (self.model_picker, self.prompt_toggle, self.tool_server_button):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(self.settings_button)
        self.retranslate()

    def retranslate(self) -> None:
        self.settings_button.setText(self.tr("Settings"))
        self.settings_button.setAccessibleName(self.tr("Settings"))
        self.model_picker.setAccessibleName(self.tr("Model"))
        self.model_picker.setToolTip(self.tr("The model that answers in this conversation"))
        self.model_picker.setPlaceholderText(self.tr("No model"))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

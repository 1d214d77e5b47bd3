"""The widgets one transcript row is drawn with: message bubbles, notice dividers (tool cards:
`ui.conversation.tool_card`, built on the views here).

Each takes a `TranscriptItem` in ``refresh(item)`` and redraws only what changed since the
item's last ``version`` it saw. Text views are `QTextBrowser`s that grow to their content's
height (the transcript scrolls, not each message) and pass the wheel on to the transcript.

An answer that is streaming is drawn in two views: ``body`` holds the finished Markdown blocks,
appended once each, and ``tail`` holds the block still growing, re-rendered on every refresh.
When the answer is complete the tail's text joins the body and the tail is hidden. So a long
answer costs rendering time in proportion to its length.

On ``QEvent.LanguageChange`` a row sets its fixed strings again and redraws its item, so
status lines ("Stopped. …"), tool states and Copy links change language at once; on a
palette change between light and dark an answer renders again, so its code blocks follow.

Nothing shown here is trusted (DESIGN.md, "Untrusted input"): a `RichText` view never loads
a resource (its document answers every request with nothing), labels that show outside
text are plain text, and a link opens only for http, https and mailto, after asking when
its text names another host than the one it goes to. Hovering a link shows its target.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QRectF, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPalette,
    QPen,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..common.dialog_buttons import confirm_box
from ..common.i18n import engine_language
from ..common.markdown import Link, StreamSplitter, named_host, render_markdown, tooltip_text
from .items import ItemKind, ItemState, TranscriptItem

__all__ = [
    "OPENABLE_SCHEMES",
    "AnswerView",
    "InertDocument",
    "NoticeView",
    "RichText",
    "UserView",
]

OPENABLE_SCHEMES = ("http", "https", "mailto")  # the only links that leave the app
_MARK = "\u2063"  # a placeholder paragraph's text while a piece is appended (see append_html)


def _is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Base).lightness() < 128


class InertDocument(QTextDocument):
    """A text document that loads nothing: every image or style sheet it asks for is empty.

    Qt's own `loadResource` reads local paths (and ``file:`` and relative names, against the
    current folder): an image of ``/dev/zero`` read until memory ran out, a FIFO blocked the
    window. The app generates no resources, so none is ever found.
    """

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 (Qt's name)
        return None


class RichText(QTextBrowser):
    """A read-only rich-text view as tall as its content; links go to `linkActivated`.

    It loads nothing (`InertDocument`). `describe_link` turns a hovered link into the text
    its tooltip shows (by default the link's address).
    """

    linkActivated = Signal(QUrl)  # noqa: N815 (Qt naming)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocument(InertDocument(self))
        self.setSearchPaths([])
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.describe_link: Callable[[QUrl], str] = lambda url: url.toDisplayString()
        self.highlighted.connect(self._hovered)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.document().setDocumentMargin(2)
        self._set_indent()
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.anchorClicked.connect(self.linkActivated.emit)
        self.setFixedHeight(self._height_for(0))

    def _set_indent(self) -> None:
        # A list level indents by about two lines' height, as a browser's 40px does at its
        # larger type; Qt's fixed 40px put a nested bullet far right of its parent's text.
        self.document().setIndentWidth(round(1.75 * self.fontMetrics().height()))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.FontChange:
            self._set_indent()
        super().changeEvent(event)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 (Qt's name)
        return None  # see InertDocument: nothing is read, whatever the document asks for

    def setSource(self, name: QUrl | str, kind: Any = None) -> None:  # noqa: N802 (Qt's name)
        """Never navigate: a view shows what it was given."""

    def _hovered(self, url: QUrl) -> None:
        target = self.describe_link(url) if url.isValid() and not url.isEmpty() else ""
        self.setToolTip(tooltip_text(target))
        self.setStatusTip(target)

    def append_html(self, html: str) -> None:
        """Add rendered blocks at the end, laid out as if the whole were set at once.

        ``QTextEdit.append`` and ``insertHtml`` merge the piece's first block into the last
        block there: a paragraph after a list became a list item, a quote lost its indent.
        So the piece goes in behind a placeholder paragraph, which merges instead, and the
        placeholder's one character is then removed.
        """
        document = self.document()
        if document.isEmpty():
            self.setHtml(html)
            return
        cursor = QTextCursor(document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        end = cursor.position()
        cursor.insertFragment(QTextDocumentFragment.fromHtml(f"<p>{_MARK}</p>{html}"))
        cursor.setPosition(end)
        cursor.setPosition(end + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _height_for(self, content: float) -> int:
        margins = self.contentsMargins()
        return int(math.ceil(content)) + margins.top() + margins.bottom() + 2 * self.frameWidth()

    def _fit(self, size: Any) -> None:
        height = self._height_for(size.height())
        if height != self.height():
            self.setFixedHeight(height)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.height())

    def wheelEvent(self, event: Any) -> None:  # noqa: N802
        event.ignore()  # the transcript scrolls, not each message


def _number(url: QUrl) -> int:
    try:
        return int(url.path() or url.toString().partition(":")[2])
    except ValueError:
        return -1


def _same_host(named: str, target: str) -> bool:
    target = target.lower().removeprefix("www.")
    return target == named or target.endswith("." + named)


def open_link(link: Link, parent: QWidget) -> QMessageBox | None:
    """Open a link the person clicked, if it may leave the app; return the question asked.

    Only http, https and mailto open; anything else (``file:``, ``javascript:``, ``data:``,
    an app's own scheme, a bare path) does nothing. A web link whose text names a host other
    than the one it goes to (``https://bank.example`` leading to ``http://127.0.0.1:9``)
    opens only after the person confirms, in a box opened with ``open()`` (DESIGN.md: no
    nested ``exec()``).
    """
    url = QUrl(link.target)
    scheme = url.scheme().lower()
    if not url.isValid() or scheme not in OPENABLE_SCHEMES:
        return None
    named = named_host(link.text) if scheme in ("http", "https") else None
    if named is None or _same_host(named, url.host()):
        QDesktopServices.openUrl(url)
        return None
    box, go = confirm_box(
        parent.window(),
        "linkCheck",
        title=QCoreApplication.translate("LinkCheck", "Open this link?"),
        text=QCoreApplication.translate(
            "LinkCheck", "The link's text shows {named}, but it goes to {host}:\n{url}"
        ).format(named=named, host=url.host() or link.target, url=url.toDisplayString()),
        action=QCoreApplication.translate("LinkCheck", "Open {host}").format(host=url.host()),
        role=QMessageBox.ButtonRole.AcceptRole,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.buttonClicked.connect(
        lambda button: QDesktopServices.openUrl(url) if button is go else None
    )
    box.open()
    return box


class _RowView(QFrame):
    """Base: a row that draws one `TranscriptItem`."""

    # an action on the row's message: (action, the item, text: an edit's new text or "")
    messageAction = Signal(str, object, str)  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._seen = -1
        self._item: TranscriptItem | None = None  # the item last drawn
        self.actions_bar: Any = None  # a message's `MessageActions` (user and answer rows)
        self.framed = False  # the message holds the keyboard focus: a frame says so

    def _add_actions(self, kind: ItemKind, layout: QVBoxLayout, text: RichText) -> None:
        """The versions, the answer's line and the actions under the message; the same
        actions in the text's context menu."""
        from .message_actions import MessageActions

        self.actions_bar = MessageActions(kind, self)
        self.actions_bar.triggered.connect(self._action)
        layout.addWidget(self.actions_bar)
        text.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        text.customContextMenuRequested.connect(lambda pos, text=text: self._menu(text, pos))
        text.installEventFilter(self)  # its focus draws the row's frame (`eventFilter`)

    def eventFilter(self, watched: Any, event: QEvent) -> bool:  # noqa: N802
        # A caret alone does not show which message the keyboard is on (Alt+Up / Alt+Down):
        # the row is framed while its text has the focus, unless a click put it there (the
        # person is selecting with the mouse); its menu opening and closing changes nothing.
        kind = event.type()
        if watched is self.message_text() and kind in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            reason = event.reason()  # type: ignore[attr-defined]
            if reason == Qt.FocusReason.PopupFocusReason:
                pass
            elif kind == QEvent.Type.FocusIn:
                self._set_framed(reason != Qt.FocusReason.MouseFocusReason)
            else:
                self._set_framed(False)
        return super().eventFilter(watched, event)

    def _set_framed(self, framed: bool) -> None:
        if framed != self.framed:
            self.framed = framed
            self.update()

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        super().paintEvent(event)
        if self.framed:
            painter = QPainter(self)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 7, 7)
            painter.end()

    def _menu(self, text: RichText, pos: Any) -> Any:
        if getattr(self, "editing", False):
            return None  # the editor's own keys and menu apply
        menu = text.createStandardContextMenu(pos)  # with the link's entries at ``pos``
        menu.setObjectName("messageMenu")
        # Only what can be done here: the text widget's greyed-out entries ("Copy Link
        # Location" with no link under the cursor, "Copy" with nothing selected) go.
        for entry in menu.actions():
            if not entry.isSeparator() and not entry.isEnabled():
                menu.removeAction(entry)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one menu at a time, freed
        extra = self.actions_bar.menu_actions(menu) if self.actions_bar is not None else []
        if extra:
            menu.addSeparator()
            for action in extra:
                menu.addAction(action)
        self.context_menu = menu  # kept for tests and so it lives while shown
        menu.popup(text.viewport().mapToGlobal(pos))
        return menu

    def message_text(self) -> RichText | None:
        """The text widget the message's keyboard focus and menu belong to."""
        return None

    def focus_message(self) -> None:
        text = self.message_text()
        if text is not None:
            text.setFocus(Qt.FocusReason.OtherFocusReason)

    def open_menu(self) -> Any:
        """Open the message's context menu by its text's cursor (the keyboard's way)."""
        text = self.message_text()
        if text is None:
            return None
        return self._menu(text, text.cursorRect().center())

    def _action(self, action: str) -> None:
        if self._item is not None:
            self.messageAction.emit(action, self._item, "")

    def _draw_actions(self, item: TranscriptItem) -> None:
        if self.actions_bar is not None:
            self.actions_bar.show_for(item)

    def refresh(self, item: TranscriptItem) -> None:
        if item.version == self._seen:
            return
        self._seen = item.version
        self._item = item
        self._draw(item)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set the row's fixed strings, then draw its item again, in the current language."""
        self._retranslate_ui()
        if self._item is not None:
            self._draw(self._item)

    def _retranslate_ui(self) -> None:
        """Set the strings that do not depend on the item (none by default)."""

    def _draw(self, item: TranscriptItem) -> None:
        raise NotImplementedError


class UserView(_RowView):
    """What the person typed, plain text in a tinted bubble."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("userMessage")
        self.setStyleSheet(
            "#userMessage { background: palette(alternate-base); border-radius: 8px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        self.text = RichText(self)
        layout.addWidget(self.text)
        # Edit: the message becomes an editor with Save and send / Cancel, in place.
        self._edit_box = QWidget(self)
        self._edit_box.setObjectName("messageEditor")
        box = QVBoxLayout(self._edit_box)
        box.setContentsMargins(0, 0, 0, 0)
        self.editor = QPlainTextEdit(self._edit_box)
        self.editor.setObjectName("editText")
        self.editor.setTabChangesFocus(True)
        self.editor.installEventFilter(self)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_edit = QPushButton(self._edit_box)
        self.cancel_edit.setObjectName("cancelEditButton")
        self.send_edit = QPushButton(self._edit_box)
        self.send_edit.setObjectName("saveAndSendButton")
        self.send_edit.setAutoDefault(False)
        self.cancel_edit.setAutoDefault(False)
        self.cancel_edit.clicked.connect(self.close_editor)
        self.send_edit.clicked.connect(self._send_edit)
        buttons.addWidget(self.cancel_edit)
        buttons.addWidget(self.send_edit)
        box.addWidget(self.editor)
        box.addLayout(buttons)
        self._edit_box.hide()
        layout.addWidget(self._edit_box)
        self._add_actions(ItemKind.USER, layout, self.text)
        self._retranslate_ui()

    def _retranslate_ui(self) -> None:
        self.setAccessibleName(self.tr("Your message"))
        self.cancel_edit.setText(self.tr("Cancel"))
        self.send_edit.setText(self.tr("Save and send"))
        self.editor.setAccessibleName(self.tr("Edit your message"))

    def _draw(self, item: TranscriptItem) -> None:
        self.text.setPlainText(item.text)
        self._draw_actions(item)

    def message_text(self) -> RichText | None:
        return self.text

    def _action(self, action: str) -> None:
        if action == "edit":
            self.open_editor()
            return
        super()._action(action)

    @property
    def editing(self) -> bool:
        return self._edit_box.isVisibleTo(self)

    def open_editor(self) -> None:
        """Show the message as an editor (its text), focused."""
        if self._item is None:
            return
        self.editor.setPlainText(self._item.text)
        # As tall as the text (two to twelve lines), not a page for a one-line question.
        lines = min(max(self._item.text.count("\n") + 1, 2), 12)
        self.editor.setFixedHeight(self.editor.fontMetrics().lineSpacing() * lines + 16)
        self.text.hide()
        self.actions_bar.hide()
        self._edit_box.show()
        self.editor.setFocus()
        self.editor.moveCursor(QTextCursor.MoveOperation.End)

    def close_editor(self) -> None:
        self._edit_box.hide()
        self.text.show()
        self.actions_bar.show()

    def _send_edit(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or self._item is None:
            return
        # The editor stays open until the new version starts (its row is then replaced): a
        # refusal (an answer still running) leaves the person's words where they are.
        self.messageAction.emit("edit", self._item, text)

    def eventFilter(self, watched: Any, event: QEvent) -> bool:  # noqa: N802
        # In the editor: Esc cancels, Ctrl+Enter saves and sends (Enter is a new line).
        if watched is self.editor and event.type() == QEvent.Type.KeyPress:
            key = event.key()  # type: ignore[attr-defined]
            if key == Qt.Key.Key_Escape:
                self.close_editor()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
                event.modifiers() & Qt.KeyboardModifier.ControlModifier  # type: ignore[attr-defined]
            ):
                self._send_edit()
                return True
        return super().eventFilter(watched, event)


class AnswerView(_RowView):
    """An assistant answer: reasoning (collapsed), Markdown body, and how it stopped."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("assistantMessage")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 2, 4, 2)
        outer.setSpacing(2)
        # An earlier attempt (a cut-off answer Resume redid) is folded behind this toggle.
        self.attempt_toggle = _FoldToggle(self)
        self.attempt_toggle.setObjectName("earlierAttemptToggle")
        self.attempt_toggle.toggled.connect(self._toggle_attempt)
        self.attempt_toggle.hide()
        self.content = QWidget(self)
        self.content.setObjectName("answerContent")
        outer.addWidget(self.attempt_toggle)
        outer.addWidget(self.content)
        layout = QVBoxLayout(self.content)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.reasoning_toggle = QToolButton(self)
        self.reasoning_toggle.setObjectName("reasoningToggle")
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.reasoning_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.reasoning_toggle.setAutoRaise(True)
        self.reasoning_toggle.toggled.connect(self._toggle_reasoning)
        self.reasoning_toggle.hide()
        self.reasoning = QLabel(self)
        self.reasoning.setObjectName("reasoningText")
        self.reasoning.setWordWrap(True)
        self.reasoning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasoning.setTextFormat(Qt.TextFormat.PlainText)
        self.reasoning.setStyleSheet("color: palette(placeholder-text); padding-left: 14px;")
        self.reasoning.hide()
        self.body = RichText(self)
        self.tail = RichText(self)
        self.tail.hide()
        self.status = QLabel(self)
        self.status.setObjectName("answerStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # holds the provider's words
        self.status.hide()
        for widget in (self.reasoning_toggle, self.reasoning, self.body, self.tail, self.status):
            layout.addWidget(widget)
        self._add_actions(ItemKind.ASSISTANT, outer, self.body)
        for view in (self.body, self.tail):
            view.linkActivated.connect(self._link_activated)
            view.describe_link = self._describe_link
        self._codes: list[str] = []  # code blocks in the body, for the Copy links
        self._tail_codes: list[str] = []
        self._links: list[Link] = []  # the body's links (``link:N``), then the tail's
        self._tail_links: list[Link] = []
        self._expanded: set[int] = set()  # code blocks the person opened in full
        self._whole = False  # the person asked for all of a very long answer
        self._dark: bool | None = None  # the palette the text was last rendered for
        self.link_question: QMessageBox | None = None  # the last "open this link?" asked
        self._splitter = StreamSplitter()
        self._fed = 0  # characters of the text given to the splitter
        self._stable = 0  # characters rendered into the body
        self._final_text: str | None = None  # the text the body shows when complete
        self._stream_text = ""  # the text as last streamed
        self._retranslate_ui()

    def message_text(self) -> RichText | None:
        return self.body

    def _retranslate_ui(self) -> None:
        self.setAccessibleName(self.tr("Assistant answer"))
        self.reasoning_toggle.setText(self.tr("Reasoning"))

    def retranslate(self) -> None:
        if self._codes or self._tail_codes:
            self._restart()  # the Copy links are inside the rendered HTML: render it again
        super().retranslate()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if (
            event.type() == QEvent.Type.PaletteChange
            and self._dark is not None
            and self._dark != _is_dark(self)
            and self._item is not None
        ):
            # Code blocks carry their colours in the HTML: render again for the new palette.
            self._restart()
            self._draw(self._item)
        super().changeEvent(event)

    def _link(self, url: QUrl) -> Link | None:
        links = self._links + self._tail_links
        number = _number(url)
        return links[number] if url.scheme() == "link" and 0 <= number < len(links) else None

    def _describe_link(self, url: QUrl) -> str:
        link = self._link(url)
        if link is not None:
            return link.target
        return "" if url.scheme() in ("copy", "expand", "more") else url.toDisplayString()

    def _link_activated(self, url: QUrl) -> None:
        scheme = url.scheme()
        number = _number(url)
        if scheme == "copy":
            codes = self._codes + self._tail_codes
            if 0 <= number < len(codes):
                QGuiApplication.clipboard().setText(codes[number].rstrip("\n"))
        elif scheme in ("expand", "more") and (number >= 0 or scheme == "more"):
            if scheme == "more":
                self._whole = True
            else:
                self._expanded.add(number)
            if self._item is not None:
                self._restart()
                self._draw(self._item)
        else:
            link = self._link(url)
            if link is not None:
                self.link_question = open_link(link, self)

    @property
    def code_blocks(self) -> list[str]:
        return list(self._codes)

    def unfold_for(self, terms: list[str]) -> bool:
        """Show the folded parts that hold one of ``terms`` (a find's hit the shown text
        lacks): the code blocks that hold one open, and all of a very long answer is shown.
        Returns whether anything opened."""
        if self._item is None:
            return False
        words = [t.casefold() for t in terms if t]
        opened = {n for n, code in enumerate(self._codes) if any(w in code.casefold() for w in words)}
        opened -= self._expanded
        whole = not self._whole and any(w in self._item.text.casefold() for w in words)
        if not opened and not whole:
            return False
        self._expanded |= opened
        self._whole = self._whole or whole
        self._restart()
        self._draw(self._item)
        return True

    def _toggle_attempt(self, shown: bool) -> None:
        self.content.setVisible(shown or not self.attempt_toggle.isVisibleTo(self))
        self.attempt_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _draw_fold(self, item: TranscriptItem) -> None:
        """An earlier attempt shows only its toggle until the person opens it."""
        self.attempt_toggle.setVisible(item.earlier)
        if item.earlier:
            self.attempt_toggle.setText(
                self.tr("Earlier attempt (stopped)")
                if item.state is ItemState.STOPPED
                else self.tr("Earlier attempt (cut off)")
            )
            self.attempt_toggle.setAccessibleName(self.attempt_toggle.text())
            self.attempt_toggle.setToolTip(self.tr("Show the answer Resume wrote again below"))
        self.content.setVisible(not item.earlier or self.attempt_toggle.isChecked())

    def _toggle_reasoning(self, shown: bool) -> None:
        self.reasoning.setVisible(shown)
        self.reasoning_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _render(self, text: str, start: int, link_start: int) -> tuple[str, list[str], list[Link]]:
        self._dark = _is_dark(self)
        rendered = render_markdown(
            text,
            dark=self._dark,
            code_start=start,
            copy_label=self.tr("Copy"),
            link_start=link_start,
            expand_label=self.tr("Show all {count} lines"),
            expanded=self._expanded,
            whole=self._whole,
            more_label=self.tr("Show all {count} characters"),
            cell_line=self.body.fontMetrics().lineSpacing(),
        )
        return rendered.html, rendered.code_blocks, rendered.links

    def _draw(self, item: TranscriptItem) -> None:
        reasoning = item.reasoning
        self.reasoning_toggle.setVisible(bool(reasoning))
        if reasoning and (self.reasoning.isVisible() or self.reasoning.text() != reasoning):
            self.reasoning.setText(reasoning)
        text = item.text
        if item.state is ItemState.STREAMING:
            self._stream(text)
        else:
            self._complete(text)
        self._draw_status(item)
        self._draw_fold(item)
        self._draw_actions(item)

    def _stream(self, text: str) -> None:
        if len(text) < self._fed or self._final_text is not None:
            self._restart()
        self._stream_text = text
        boundary = self._splitter.feed(text[self._fed :])
        self._fed = len(text)
        if boundary > self._stable:
            chunk, codes, links = self._render(
                text[self._stable : boundary], len(self._codes), len(self._links)
            )
            self._codes += codes
            self._links += links
            self.body.append_html(chunk)
            self._stable = boundary
        self.body.setVisible(self._stable > 0)  # an empty view would leave a gap above
        tail = text[self._stable :]
        if tail.strip():
            tail_html, self._tail_codes, self._tail_links = self._render(
                tail, len(self._codes), len(self._links)
            )
            self.tail.setHtml(tail_html)
            self.tail.show()
        else:
            self.tail.hide()

    def _restart(self) -> None:
        self.body.clear()
        self.tail.clear()
        self._codes = []
        self._tail_codes = []
        self._links = []
        self._tail_links = []
        self._splitter = StreamSplitter()
        self._fed = self._stable = 0
        self._final_text = None
        self._stream_text = ""

    def _complete(self, text: str) -> None:
        if self._final_text == text:
            return
        if self._stable and text.startswith(self._stream_text[: self._stable]):
            rest = text[self._stable :]
            if rest.strip():
                chunk, codes, links = self._render(rest, len(self._codes), len(self._links))
                self._codes += codes
                self._links += links
                self.body.append_html(chunk)
        else:
            body, self._codes, self._links = self._render(text, 0, 0)
            self.body.setHtml(body)
        self.tail.clear()
        self.tail.hide()
        self.body.setVisible(bool(text.strip()))
        self._tail_codes = []
        self._tail_links = []
        self._final_text = text
        self._stable = self._fed = len(text)

    def _draw_status(self, item: TranscriptItem) -> None:
        # "saved" only for an answer whose text was stored (item.saved): the sentence is
        # decided by whether the write succeeded, never promised in advance.
        if item.saved:
            stopped = self.tr("Stopped. The partial answer above is saved.")
            cut = self.tr("The answer was cut off. What arrived is saved.")
        else:
            stopped = self.tr("Stopped. The partial answer above could not be saved.")
            cut = self.tr("The answer was cut off. What arrived could not be saved.")
        messages = {
            ItemState.STOPPED: stopped,
            ItemState.INTERRUPTED: cut,
            ItemState.TRUNCATED: self.tr("The answer reached the output limit."),
            ItemState.REFUSED: self.tr("The model declined to answer."),
            ItemState.CONTEXT_FULL: self.tr(
                "The conversation is too long for the model. Start a new conversation."
            ),
            ItemState.PAUSED: self.tr("The provider paused this answer."),
            ItemState.OTHER: self.tr("The answer stopped for an unknown reason."),
        }
        message = messages.get(item.state)
        if (
            message
            and item.stop is not None
            and item.stop.message
            and item.state in (ItemState.INTERRUPTED, ItemState.OTHER)
        ):
            # The one notice of a cut-off answer: the engine's words for why, in the window's
            # language, then whether what arrived is kept (a stop exists, so the engine is
            # loaded: this import costs nothing at the first paint).
            from engine import describe_stop, join_sentences

            why = describe_stop(item.stop, engine_language())
            if item.state is ItemState.INTERRUPTED:
                kept = (
                    self.tr("What arrived is saved.")
                    if item.saved
                    else self.tr("What arrived could not be saved.")
                )
                message = join_sentences(why, kept)  # no space after a Chinese "。"
            else:
                message = f"{message} ({why})"
        self.status.setVisible(message is not None)
        if message:
            self.status.setText("⚠ " + message)
        self.setProperty("state", item.state.value)


class _FoldToggle(QToolButton):
    """A flat, checkable disclosure button that Enter opens and closes as well as Space."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setArrowType(Qt.ArrowType.RightArrow)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.toggle()
            return
        super().keyPressEvent(event)


class NoticeView(_RowView):
    """A message from the runtime (a resume notice): a thin divider with a short caption."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeDivider")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        self.caption = QLabel(self)
        self.caption.setObjectName("noticeCaption")
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setStyleSheet("color: palette(placeholder-text); font-size: small;")
        self.caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # Line, caption, line, added in order (inserting the second line at 2 into a
        # one-item layout printed "QBoxLayout::insert: index 2 out of range").
        for widget in (self._line(), self.caption, self._line()):
            layout.addWidget(widget, 0 if widget is self.caption else 1)

    def _line(self) -> QFrame:
        line = QFrame(self)
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        return line

    def caption_for(self, item: TranscriptItem) -> str:
        captions = {
            "resume:retry_response": self.tr("Resumed: the cut-off answer is redone"),
            "resume:continue_response": self.tr("Resumed: continuing after the output limit"),
            "goal": self.tr("Goal not reached yet: carrying on"),
        }
        if item.tag in captions:
            return captions[item.tag]
        if item.tag and item.tag.startswith("resume:"):
            return self.tr("Resumed")
        first = item.text.strip().splitlines()[0] if item.text.strip() else ""
        return first[:120]

    def _draw(self, item: TranscriptItem) -> None:
        caption = self.caption_for(item)
        self.caption.setText(caption)
        self.caption.setToolTip(tooltip_text(item.text))
        self.setAccessibleName(caption)

"""The tool card: one tool call in the transcript, and the place the person approves it.

A card shows the tool by what it really is: its own name and its server, always in the
card's visible text; the title its server gives is shown beside them, as its words, never in
their place. Then what its server says it does, read strictly (`engine.messages.tool_effect`):
read-only, may change things, or destructive — which is also what hints that contradict each
other, or no hints at all, count as (the card says which). Then its state, and two folds: the
arguments (formatted JSON, their first `ARGUMENTS_SHOWN` characters until the person asks for
all) and the result. States: waiting, waiting for your answer, running (with the seconds it
has run, counted by a timer only while it runs), done, failed, denied, did not run,
interrupted. The calls of one answer past the cap are one `FoldedCallsView` row.

While the call waits for approval (`ItemState.AWAITING_APPROVAL`, see `ui.tools.approvals`) the
card shows its arguments open and three buttons: Allow once (``allowOnceButton``), Always
allow this tool (``alwaysAllowButton``) and Deny (``denyButton``), with an optional reason
(``denyReason``). Esc denies, from anywhere in the window (`ui.main_window`). Nothing allows
by Enter: no button is a default button, Enter on the card does nothing, and Enter in the
reason box denies with that reason. When it begins to wait, the card takes the focus itself
(the frame, where typing does nothing and Esc denies; Tab reaches its buttons) — unless the
person is typing: a text field holding text keeps the focus. Its accessible name says that it
waits.

A result is untrusted text: rendered like an answer (`ui.common.markdown.render_markdown` into a
`RichText`, which loads nothing and shows raw HTML as text), only when the person opens it,
and only its beginning unless they ask for all.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication, Qt, QTimer, QUrl
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..common.eliding_label import ElidingLabel
from ..common.markdown import Link, render_markdown
from .items import ApprovalChoice, ItemState, ToolEffect, ToolHints, TranscriptItem
from .message_views import RichText, _FoldToggle, _is_dark, _number, _RowView, open_link

__all__ = ["ARGUMENTS_SHOWN", "FoldedCallsView", "ToolCardView"]

#: The characters of a call's arguments a card shows until the person asks for all, and the
#: lines: a label lays out all of its text at once (1 MB of arguments froze the window for
#: half a minute), and a person reads the beginning first.
ARGUMENTS_SHOWN = 4000
ARGUMENT_LINES = 60

_CARD_STYLE = (
    "#toolCard { border: 1px solid palette(mid); border-radius: 6px; background: palette(base); }"
    ' #toolCard[waiting="true"] { border: 2px solid #1565c0; }'
)

_COLOURS = {
    ItemState.AWAITING_APPROVAL: "#1565c0",
    ItemState.RUNNING: "#b07d00",
    ItemState.DONE: "#2e7d32",
    ItemState.FAILED: "#c62828",
    ItemState.DENIED: "#c62828",
    ItemState.NOT_RUN: "#c25e00",
    ItemState.INTERRUPTED: "#c25e00",
}


class ToolCardView(_RowView):
    """A tool call: what it is, its state, its arguments and result, and its approval."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # One style sheet, set once (each setStyleSheet re-polishes the card: half a
        # millisecond, and dozens of cards came at once); waiting is a property it selects on.
        self.setProperty("waiting", False)
        self.setStyleSheet(_CARD_STYLE)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(3)
        header = QHBoxLayout()
        self.name = ElidingLabel(self)  # a long name gives way; the state never does
        self.name.setObjectName("toolName")
        self.name.setTextFormat(Qt.TextFormat.PlainText)  # the model and servers name tools
        bold = QFont(self.name.font())
        bold.setBold(True)
        self.name.setFont(bold)
        self.server = QLabel(self)
        self.server.setObjectName("toolServer")
        self.server.setTextFormat(Qt.TextFormat.PlainText)
        self.server.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.state = QLabel(self)
        self.state.setObjectName("toolState")
        self.state.setFont(bold)
        self.elapsed = QLabel(self)
        self.elapsed.setObjectName("toolElapsed")
        self.elapsed.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.elapsed.hide()
        header.addWidget(self.name)
        header.addWidget(self.server)
        header.addStretch(1)
        header.addWidget(self.elapsed)
        header.addWidget(self.state)
        layout.addLayout(header)
        # The server's title for the tool: its words, shown second, never as the name.
        self.title = QLabel(self)
        self.title.setObjectName("toolTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setWordWrap(True)
        self.title.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.title.hide()
        layout.addWidget(self.title)
        self.effect = QLabel(self)
        self.effect.setObjectName("toolEffect")
        self.effect.setWordWrap(True)
        self.effect.hide()
        layout.addWidget(self.effect)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.arguments_toggle = _FoldToggle(self)
        self.arguments_toggle.setObjectName("toolArgumentsToggle")
        self.arguments_toggle.toggled.connect(self._toggle_arguments)
        self.arguments = QLabel(self)
        self.arguments.setObjectName("toolArguments")
        self.arguments.setFont(mono)
        self.arguments.setWordWrap(True)
        self.arguments.setTextFormat(Qt.TextFormat.PlainText)
        self.arguments.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.arguments.hide()
        # Arguments longer than the card shows: "Show all" puts them in a scrolling box
        # (which lays out only what is in view).
        self.arguments_more = QToolButton(self)
        self.arguments_more.setObjectName("toolArgumentsShowAll")
        self.arguments_more.setAutoRaise(True)
        self.arguments_more.clicked.connect(self._show_all_arguments)
        self.arguments_more.hide()
        self.arguments_all: QPlainTextEdit | None = None  # made when first asked for
        self._arguments_whole = False  # the person asked for all of long arguments
        self._arguments_long = False  # the arguments drawn are longer than the card shows
        self._arguments_shown: tuple[str, bool] | None = None  # (text, whole) as last drawn
        self.result_toggle = _FoldToggle(self)
        self.result_toggle.setObjectName("toolResultToggle")
        self.result_toggle.toggled.connect(self._toggle_result)
        self.result_toggle.hide()
        self.result = RichText(self)
        self.result.setObjectName("toolResult")
        self.result.linkActivated.connect(self._link_activated)
        self.result.describe_link = self._describe_link
        self.result.hide()
        for widget in (self.arguments_toggle, self.arguments, self.arguments_more):
            layout.addWidget(widget)
        self._layout = layout

        # The approval: shown only while the call waits for the person.
        self.approval = QWidget(self)
        self.approval.setObjectName("approvalBox")
        box = QVBoxLayout(self.approval)
        box.setContentsMargins(0, 4, 0, 0)
        self.question = QLabel(self.approval)
        self.question.setObjectName("approvalQuestion")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        box.addWidget(self.question)
        buttons = QHBoxLayout()
        self.allow_once = self._button("allowOnceButton")
        self.always_allow = self._button("alwaysAllowButton")
        self.deny = self._button("denyButton")
        self.deny_reason = QLineEdit(self.approval)
        self.deny_reason.setObjectName("denyReason")
        self.deny_reason.setClearButtonEnabled(True)
        self.deny_reason.returnPressed.connect(self._deny_with_reason)
        self.allow_once.clicked.connect(lambda: self._answer(ApprovalChoice.ALLOW_ONCE))
        self.always_allow.clicked.connect(lambda: self._answer(ApprovalChoice.ALWAYS))
        self.deny.clicked.connect(lambda: self._answer(ApprovalChoice.DENY))
        for button in (self.allow_once, self.always_allow):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.deny_reason, 2)
        buttons.addWidget(self.deny)
        box.addLayout(buttons)
        self.approval.hide()
        layout.addWidget(self.approval)
        layout.addWidget(self.result_toggle)
        layout.addWidget(self.result)

        self._ticker = QTimer(self)  # the elapsed seconds, only while the tool runs
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        self._opened_for: ItemState | None = None  # the failed state the result was opened for
        # (text, whole, dark, blocks opened) as last rendered
        self._rendered: tuple[str, bool, bool, int] | None = None
        self._whole = False  # the person asked for all of a long result
        self._expanded: set[int] = set()  # code blocks the person opened in full
        self._links: list[Link] = []
        self._codes: list[str] = []
        self.link_question: QMessageBox | None = None
        self._retranslate_ui()

    def _set_border(self, waiting: bool) -> None:
        # A card that waits for the person stands out (the style sheet selects on this).
        if self.property("waiting") != waiting:
            self.setProperty("waiting", waiting)
            self.style().unpolish(self)
            self.style().polish(self)

    def _button(self, name: str) -> QPushButton:
        button = QPushButton(self.approval)
        button.setObjectName(name)
        # A stray Enter must never allow: no button is a default button.
        button.setAutoDefault(False)
        button.setDefault(False)
        return button

    def tab_stops(self) -> list[QWidget]:
        """The card's keyboard stops, in reading order (`TranscriptView` chains them)."""
        return [
            self.arguments_toggle,
            self.arguments_more,
            self.allow_once,
            self.always_allow,
            self.deny_reason,
            self.deny,
            self.result_toggle,
        ]

    def _retranslate_ui(self) -> None:
        self.arguments_toggle.setText(self.tr("Arguments"))
        self.arguments_toggle.setAccessibleName(self.tr("Show the tool's arguments"))
        self.result_toggle.setText(self.tr("Result"))
        self.result_toggle.setAccessibleName(self.tr("Show the tool's result"))
        self.allow_once.setText(self.tr("Allow once"))
        self.always_allow.setText(self.tr("Always allow this tool"))
        self.always_allow.setToolTip(
            self.tr("Run this tool of this server from now on without asking")
        )
        self.deny.setText(self.tr("Deny"))
        self.deny.setToolTip(self.tr("Do not run it; the model is told (Esc)"))
        self.deny_reason.setPlaceholderText(self.tr("Reason (optional)"))
        self.deny_reason.setAccessibleName(self.tr("Reason for denying (optional)"))

    # ------------------------------------------------------------------ drawing

    def state_text(self, state: ItemState) -> str:
        return {
            ItemState.PENDING: self.tr("waiting"),
            ItemState.AWAITING_APPROVAL: self.tr("waiting for your answer"),
            ItemState.RUNNING: self.tr("running…"),
            ItemState.DONE: self.tr("done"),
            ItemState.FAILED: self.tr("failed"),
            ItemState.DENIED: self.tr("denied"),
            ItemState.NOT_RUN: self.tr("did not run"),
            ItemState.INTERRUPTED: self.tr("interrupted"),
        }.get(state, state.value)

    def effect_text(self, effect: ToolEffect, hints: ToolHints = ToolHints.SAID) -> str:
        if effect is ToolEffect.DESTRUCTIVE and hints is ToolHints.CONTRADICTORY:
            return self.tr(
                "Treated as destructive: its server calls it read-only, then says things "
                "that contradict it (that it destroys, or is not safe to repeat)"
            )
        if effect is ToolEffect.DESTRUCTIVE and hints is ToolHints.SILENT:
            return self.tr(
                "Treated as destructive: its server says nothing about what it does"
            )
        return {
            ToolEffect.READ_ONLY: self.tr("Read-only, says its server"),
            ToolEffect.CHANGES: self.tr("May change things, says its server"),
            ToolEffect.DESTRUCTIVE: self.tr("May delete or overwrite things (destructive)"),
        }.get(effect, "")

    def display_name(self, item: TranscriptItem) -> str:
        """The tool's real name and its server ("delete_everything from files"), as the card's
        tooltip, its question and its accessible name say it; the app's own tools by name."""
        if item.tool_server:
            return self.tr("{tool} from {server}").format(
                tool=item.tool_remote or item.tool_name, server=item.tool_server
            )
        return item.tool_name

    def _draw(self, item: TranscriptItem) -> None:
        name = item.tool_remote or item.tool_name
        self.name.setText(name)
        self.name.setToolTip(self.display_name(item))
        self.server.setText(
            self.tr("· {server}").format(server=item.tool_server) if item.tool_server else ""
        )
        self.server.setVisible(bool(item.tool_server))
        titled = bool(item.tool_title) and item.tool_title != name
        self.title.setText(
            self.tr("“{title}”, says its server").format(title=item.tool_title) if titled else ""
        )
        self.title.setVisible(titled)
        effect = self.effect_text(item.tool_effect, item.tool_hints)
        self.effect.setText(("⚠ " if item.tool_effect is ToolEffect.DESTRUCTIVE else "") + effect)
        self.effect.setVisible(bool(effect))
        self._draw_arguments(item.tool_arguments)
        self.state.setText(self.state_text(item.state))
        colour = _COLOURS.get(item.state)
        palette = self.state.palette()
        palette.setColor(
            QPalette.ColorRole.WindowText,
            QColor(colour) if colour else self.palette().color(QPalette.ColorRole.PlaceholderText),
        )
        self.state.setPalette(palette)
        waiting = item.state is ItemState.AWAITING_APPROVAL and item.approval is not None
        self._draw_approval(item, self.display_name(item), waiting)
        if self.property("state") != item.state.value:
            self.setProperty("state", item.state.value)
            self._set_border(waiting)
        self._draw_elapsed(item)
        result = item.tool_result
        self.result_toggle.setVisible(bool(result))
        if (
            result
            and item.state in (ItemState.FAILED, ItemState.INTERRUPTED)
            and self._opened_for is not item.state
        ):
            self._opened_for = item.state  # once: the person may close it again
            self.result_toggle.setChecked(True)
        if self.result_toggle.isChecked():
            self._render_result()

    def _draw_arguments(self, text: str) -> None:
        """The arguments, or their beginning when long ("Show all" for the rest)."""
        shown = (text, self._arguments_whole)
        if shown == self._arguments_shown:
            return  # a state change redraws the card: the arguments are already drawn
        self._arguments_shown = shown
        if text in ("{}", ""):
            self._arguments_long = False
            self.arguments.setText(self.tr("(no arguments)"))
            self.arguments_more.hide()
            return
        lines = text.split("\n", ARGUMENT_LINES)
        beginning = "\n".join(lines[:ARGUMENT_LINES])[:ARGUMENTS_SHOWN]
        long = self._arguments_long = len(beginning) < len(text)
        if long and self._arguments_whole:
            if self.arguments_all is None:
                self.arguments_all = QPlainTextEdit(self)
                self.arguments_all.setObjectName("toolArgumentsAll")
                self.arguments_all.setReadOnly(True)
                self.arguments_all.setFont(self.arguments.font())
                self.arguments_all.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
                self.arguments_all.setFixedHeight(
                    20 * self.arguments_all.fontMetrics().lineSpacing()
                )
                index = self._layout.indexOf(self.arguments_more)
                self._layout.insertWidget(index, self.arguments_all)
            self.arguments_all.setPlainText(text)
            self.arguments_all.setVisible(self.arguments_toggle.isChecked())
            self.arguments.hide()
            self.arguments_more.hide()
            return
        self.arguments.setText(beginning + ("…" if long else ""))
        self.arguments.setVisible(self.arguments_toggle.isChecked())
        self.arguments_more.setText(
            self.tr("Show all {count} characters").format(count=f"{len(text):,}")
        )
        self.arguments_more.setVisible(long and self.arguments_toggle.isChecked())

    def _show_all_arguments(self) -> None:
        self._arguments_whole = True
        if self._item is not None:
            self._draw_arguments(self._item.tool_arguments)
            if self.arguments_all is not None:
                self.arguments_all.setFocus()

    @property
    def arguments_folded(self) -> bool:
        """Whether long arguments show only their beginning (the rest behind "Show all")."""
        return self._arguments_long and not self._arguments_whole

    def _draw_approval(self, item: TranscriptItem, tool: str, waiting: bool) -> None:
        was_waiting = self.approval.isVisibleTo(self)
        self.approval.setVisible(waiting)
        if waiting:
            self.question.setText(
                self.tr("Allow {tool} to run with these arguments?").format(tool=tool)
            )
            self.setAccessibleName(
                self.tr("Tool {tool} waits for your approval").format(tool=tool)
            )
            if not was_waiting:
                self.arguments_toggle.setChecked(True)  # the person decides on them
                self.deny_reason.clear()
                self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
                self._announce()
                # Once laid out and shown (the row may be new): take the focus, unless the
                # person is typing.
                QTimer.singleShot(0, self, self._take_focus)
        else:
            self.setAccessibleName(self.tr("Tool call {name}").format(name=tool))
            focus = self.window().focusWidget()
            self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            if was_waiting and focus is not None and (
                focus is self or self.approval.isAncestorOf(focus)
            ):
                self.arguments_toggle.setFocus()  # the focus stays on the card, not lost

    def _take_focus(self) -> None:
        """Take the focus for the waiting question, unless the person is typing (a text
        field with text in it keeps the focus, and what they type stays theirs)."""
        if not self.waiting or not self.isVisible():
            return
        focus = QApplication.focusWidget()
        if focus is not None and focus.window() is not self.window():
            return  # a dialog or another window: not ours to take from
        if _holds_typed_text(focus):
            return
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    def _announce(self) -> None:
        # Screen readers hear that a card waits; the focus stays where the person is.
        from PySide6.QtGui import QAccessible, QAccessibleEvent

        if QAccessible.isActive():
            QAccessible.updateAccessibility(QAccessibleEvent(self, QAccessible.Event.Alert))

    def _draw_elapsed(self, item: TranscriptItem) -> None:
        running = item.state is ItemState.RUNNING and item.started_at is not None
        if running and not self._ticker.isActive():
            self._ticker.start()
        elif not running:
            self._ticker.stop()
        self.elapsed.setVisible(running)
        if running:
            self._tick()

    def _tick(self) -> None:
        item = self._item
        if item is None or item.state is not ItemState.RUNNING or item.started_at is None:
            self._ticker.stop()
            self.elapsed.hide()
            return
        seconds = int(time.monotonic() - item.started_at)
        self.elapsed.setText(self.tr("{seconds} s").format(seconds=seconds))

    @property
    def ticking(self) -> bool:
        """Whether the elapsed seconds are being counted (only while the tool runs)."""
        return self._ticker.isActive()

    # ------------------------------------------------------------------ folds

    def _toggle_arguments(self, shown: bool) -> None:
        whole = self.arguments_all is not None and self._arguments_whole
        self.arguments.setVisible(shown and not whole)
        if self.arguments_all is not None:
            self.arguments_all.setVisible(shown and whole)
        self.arguments_more.setVisible(shown and not whole and self._arguments_long)
        self.arguments_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _toggle_result(self, shown: bool) -> None:
        if shown:
            self._render_result()
        self.result.setVisible(shown)
        self.result_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _render_result(self) -> None:
        """Render the result (untrusted Markdown, like an answer) if it changed."""
        text = self._item.tool_result if self._item is not None else ""
        dark = _is_dark(self)
        shown = (text, self._whole, dark, len(self._expanded))
        if self._rendered == shown:
            return
        self._rendered = shown
        # The same words as an answer's links (and their translations).
        rendered = render_markdown(
            text,
            dark=dark,
            copy_label=QCoreApplication.translate("AnswerView", "Copy"),
            expand_label=QCoreApplication.translate("AnswerView", "Show all {count} lines"),
            expanded=self._expanded,
            whole=self._whole,
            more_label=QCoreApplication.translate("AnswerView", "Show all {count} characters"),
        )
        self._links, self._codes = rendered.links, rendered.code_blocks
        self.result.setHtml(rendered.html)

    def _link(self, url: QUrl) -> Link | None:
        number = _number(url)
        return (
            self._links[number]
            if url.scheme() == "link" and 0 <= number < len(self._links)
            else None
        )

    def _describe_link(self, url: QUrl) -> str:
        link = self._link(url)
        if link is not None:
            return link.target
        return "" if url.scheme() in ("copy", "expand", "more") else url.toDisplayString()

    def _link_activated(self, url: QUrl) -> None:
        scheme = url.scheme()
        number = _number(url)
        if scheme == "copy":
            if 0 <= number < len(self._codes):
                QGuiApplication.clipboard().setText(self._codes[number].rstrip("\n"))
        elif scheme == "more":
            self._whole = True
            self._render_result()
        elif scheme == "expand" and number >= 0:
            self._expanded.add(number)
            self._render_result()
        else:
            link = self._link(url)
            if link is not None:
                self.link_question = open_link(link, self)

    # ------------------------------------------------------------------ answering

    def _answer(self, choice: ApprovalChoice, reason: str = "") -> None:
        item = self._item
        if item is None or item.approval is None or item.state is not ItemState.AWAITING_APPROVAL:
            return
        if choice is ApprovalChoice.DENY and not reason:
            reason = self.deny_reason.text()
        item.approval.answer(choice, reason.strip())

    def deny_waiting(self) -> None:
        """Deny the waiting call, with the reason typed in the card's box (Esc does this)."""
        self._answer(ApprovalChoice.DENY)

    def _deny_with_reason(self) -> None:
        # Enter in the reason box: deny with that reason; with none typed, nothing happens.
        if self.deny_reason.text().strip():
            self._answer(ApprovalChoice.DENY)

    @property
    def waiting(self) -> bool:
        """Whether the card shows a question the person has not answered."""
        return self.approval.isVisibleTo(self)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Escape and self.waiting:
            self._answer(ApprovalChoice.DENY)
            event.accept()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and self.waiting:
            event.accept()  # never allows, and goes no further (the window sends on Enter)
            return
        super().keyPressEvent(event)


def _holds_typed_text(widget: QWidget | None) -> bool:
    """Whether ``widget`` is a text field with text in it (the person may be typing)."""
    if isinstance(widget, QLineEdit):
        return bool(widget.text())
    if isinstance(widget, QTextEdit | QPlainTextEdit):
        return not widget.isReadOnly() and not widget.document().isEmpty()
    return False


class FoldedCallsView(_RowView):
    """The calls of one answer past the cap (`engine.calls.MAX_TOOL_CALLS_PER_ANSWER`), as
    one row: how many, their tools, and that none of them ran."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("foldedCalls")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#foldedCalls { border: 1px solid palette(mid); border-radius: 6px; "
            "background: palette(base); }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        self.summary = QLabel(self)
        self.summary.setObjectName("foldedCallsSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.names = QLabel(self)
        self.names.setObjectName("foldedCallsNames")
        self.names.setTextFormat(Qt.TextFormat.PlainText)
        self.names.setWordWrap(True)
        self.names.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        layout.addWidget(self.summary)
        layout.addWidget(self.names)

    def _retranslate_ui(self) -> None:
        pass

    def summary_text(self, item: TranscriptItem) -> str:
        from engine import MAX_TOOL_CALLS_PER_ANSWER

        count = f"{item.folded_total:,}"
        if item.state is ItemState.DONE:  # answered otherwise (stored by an older version)
            return self.tr("{count} more calls of this answer are not shown").format(
                count=count
            )
        return self.tr(
            "{count} more calls of this answer did not run: too many calls in one answer "
            "(at most {limit} run)"
        ).format(count=count, limit=MAX_TOOL_CALLS_PER_ANSWER)

    def _draw(self, item: TranscriptItem) -> None:
        text = self.summary_text(item)
        self.summary.setText(text)
        shown = item.folded_names[:8]
        more = len(item.folded_names) - len(shown)
        names = ", ".join(shown) + (self.tr(" and {count} more").format(count=more) if more else "")
        self.names.setText(self.tr("Tools asked for: {names}").format(names=names) if names else "")
        self.names.setVisible(bool(names))
        self.setAccessibleName(text)

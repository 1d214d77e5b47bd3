"""The main window: the conversation list, the transcript, the composer and the Resume row.

It lays out widgets and routes what the person does to the `Controller`, and what the
controller announces back to widgets. It awaits nothing itself: every piece of work is a
controller task. Dialogs open with ``open()`` (never a nested ``exec()`` inside the qasync
loop). The object names DESIGN.md lists are set here and stay stable: ``sessionList``,
``newChatButton``, ``transcript``, ``composer``, ``sendButton``, ``stopButton``,
``resumeButton``, ``modelPicker``, ``resumeLabel``, ``errorBanner``, ``sessionFilter``
(``settingsDialog`` is the dialog's own).

``resumeButton``, ``resumeLabel`` and ``errorBanner`` are permanent children shown and hidden
with ``setVisible``; they sit under the last message, so an error reads under whatever was
streamed before it. Above them ``retryStatus`` says while the provider is tried again.

The window is built in three steps, so that it is on screen before the slow parts load:

1. ``MainWindow(frame_only=True)``: the bare frame (title, size, the theme's colours). This
   module imports almost nothing at its top for this reason: PySide6 creates each Qt class
   and its Python enums the first time they are touched (about 80 ms for this window's), so
   the Qt names are imported inside the methods that use them.
2. `build_contents`: every widget, action and menu, still without the engine.
3. `attach`: the `Controller` (the engine, the store, the network) is given and connected.

`ui.app.main` shows the frame and waits for its first paint before steps 2 and 3;
`ui.app.build_window` (tests, screenshots, benchmarks) does all three at once.

Closing the window stops running requests (their partial answers are stored), saves the
geometry and closes the store, then emits `closed`.
"""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMainWindow

from .controller_placeholder import ControllerPlaceholder

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import QEvent, QModelIndex
    from PySide6.QtGui import QAction, QCloseEvent

    from .controller import Controller
    from .errors import AnyAction, Kept
    from .model_catalog import ModelChoice
    from .search import WindowSearch

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """Continuo's window. Build it with `ui.app.build_window`."""

    closed = Signal()

    def __init__(
        self,
        controller: Controller | None = None,
        *,
        first_run_dialog: bool = True,
        frame_only: bool = False,
    ) -> None:
        super().__init__()
        # a placeholder until `attach` gives the real one (start-up paints first)
        self.controller: Controller | ControllerPlaceholder = ControllerPlaceholder()
        self._first_run_dialog = first_run_dialog
        self._closing = False
        self._close_pending = False  # closed before the controller arrived
        self._shown_session = ""  # the conversation last shown (`_on_current`)
        self.activations = 0  # times a second launch brought this window forward
        self._current_point: Any = None
        self._busy_text = ""  # "open in another window" instead of Resume, else ""
        self._has_prompt = False  # the conversation has a system prompt
        self._filtering = False  # the filter, not the person, is moving the list's selection
        self.search: WindowSearch | None = None  # once the widgets are built
        self.about_dialog: Any = None
        # the message given to the controller and not yet stored: the composer keeps it
        self._sending = ""
        self.settings_dialog: Any = None
        self.setObjectName("mainWindow")
        # Sizes are in device-independent pixels: at 200% a 1080p screen is 960x540 of them,
        # so the first size is capped to the screen, and the smallest one still fits it.
        self.setMinimumSize(640, 400)
        self.resize(*self._first_size(1100, 760))
        self._built = False
        self.retranslate()  # the title, for the frame
        if not frame_only or controller is not None:
            self.build_contents()
        if controller is not None:
            self.attach(controller)

    def _first_size(self, width: int, height: int) -> tuple[int, int]:
        """``width`` x ``height``, or 90% of the screen's free area where that is smaller."""
        screen = self.screen()
        if screen is None:
            return width, height
        free = screen.availableGeometry()
        return min(width, int(free.width() * 0.9)), min(height, int(free.height() * 0.9))

    def build_contents(self) -> None:
        """Build the widgets, actions and menus (step 2; once)."""
        if self._built:
            return
        self._built = True
        self._build()
        self._build_actions()
        self._connect_widgets()
        from .search import SearchWidgets, WindowSearch

        widgets = SearchWidgets(
            field=self.session_filter,
            titles=self.session_list,
            titles_shown=self.filter_model,
            results=self.search_results,
            label=self.search_label,
            find_bar=self.find_bar,
            transcript=self.transcript,
            composer=self.composer,
            say=self.statusBar().showMessage,
        )
        self.search = WindowSearch(widgets, self)
        self.retranslate()

    def attach(self, controller: Controller) -> None:
        """Give the window its controller (step 3) and connect the two."""
        from PySide6.QtCore import QTimer

        self.build_contents()
        self.controller = controller
        controller.setParent(self)
        self.filter_model.setSourceModel(controller.sessions)
        if self.search is not None:
            self.search.attach(controller)
        from .archive.host import WindowArchiveHost

        self.archive_actions.attach(
            WindowArchiveHost(
                controller,
                say=self.statusBar().showMessage,
                select=self._select_in_list,
                refresh_search=lambda: self.search.refresh() if self.search is not None else None,
            )
        )
        c = controller
        c.currentChanged.connect(self._on_current)
        c.migrationProgress.connect(self._on_migration_progress)
        c.pathsMended.connect(self._on_paths_mended)
        c.resumeChanged.connect(self._on_resume)
        c.errorChanged.connect(self._on_error)
        c.busyChanged.connect(self._on_busy)
        c.modelsChanged.connect(self._on_models)
        c.systemPromptChanged.connect(self._on_system_prompt)
        c.importedPromptChanged.connect(self.imported_prompt.show_prompt)
        c.settingsLoaded.connect(self._on_settings)
        c.problem.connect(self._on_problem)
        c.messageStored.connect(self._on_message_stored)
        c.retryChanged.connect(self._on_retry)
        c.approvals.waitingChanged.connect(self._on_approval_waiting)
        from .approval_keys import EscapeDenies

        self.escape_denies = EscapeDenies(self)  # Esc denies a waiting card from anywhere
        c.tool_servers.changed.connect(self._show_tool_servers)
        c.tool_servers.failed.connect(self._on_tool_server_failed)
        c.tool_servers.starting.connect(self._on_tool_servers_starting)
        from . import resume_marks

        resume_marks.follow(c)  # the list's marks on conversations waiting for Resume
        c.sessions.dataChanged.connect(self._show_title)
        c.storageFailed.connect(self._on_storage_failed)
        c.file_check.started.connect(self._on_check_started)
        c.file_check.finished.connect(self._on_check_finished)
        c.inputStored.connect(self._on_input_stored)
        self._tell_language()
        if self._close_pending:
            QTimer.singleShot(0, self.close)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import (
            QHBoxLayout,
            QLabel,
            QPlainTextEdit,
            QPushButton,
            QSizePolicy,
            QSplitter,
            QToolButton,
            QVBoxLayout,
            QWidget,
        )

        from .models.sessions import SessionFilterModel
        from .widgets.composer import Composer
        from .widgets.error_banner import ErrorBanner
        from .widgets.find_bar import FindBar
        from .widgets.model_picker import ModelPicker
        from .widgets.search_results import SearchResultsView
        from .widgets.session_list import SessionFilterField, SessionListView
        from .widgets.storage_notice import StorageNotice
        from .widgets.tool_server_menu import ToolServerButton
        from .widgets.transcript_view import TranscriptView

        # Left: filter, list, new chat.
        left = QWidget(self)
        left.setObjectName("sidebar")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(8, 8, 4, 8)
        self.new_chat_button = QPushButton(left)
        self.new_chat_button.setObjectName("newChatButton")
        self.session_filter = SessionFilterField(left)
        self.filter_model = SessionFilterModel(None, self)
        self.session_list = SessionListView(left)
        self.session_list.setModel(self.filter_model)
        self.session_list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        left_layout.addWidget(self.new_chat_button)
        left_layout.addWidget(self.session_filter)
        left_layout.addWidget(self.session_list, 1)
        # Under the titles, the messages that hold what is typed (`ui.search`).
        self.search_label = QLabel(left)
        self.search_label.setObjectName("searchLabel")
        self.search_label.setVisible(False)
        self.search_results = SearchResultsView(left)
        self.search_results.setVisible(False)
        left_layout.addWidget(self.search_label)
        left_layout.addWidget(self.search_results, 1)

        # Right: header (model, system prompt, settings), transcript, composer.
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 8, 8, 8)
        header = QHBoxLayout()
        self.model_picker = ModelPicker(right)  # fits the narrowest window (elides)
        self.prompt_toggle = QToolButton(right)
        self.prompt_toggle.setObjectName("systemPromptToggle")
        self.prompt_toggle.setCheckable(True)
        self.settings_button = QToolButton(right)
        self.settings_button.setObjectName("settingsButton")
        # which MCP servers' tools this conversation is offered (hidden without servers)
        self.tool_server_button = ToolServerButton(right)
        self.tool_server_button.offerChanged.connect(self._on_offer_changed)
        self.tool_server_button.setupRequested.connect(self.open_tool_settings)
        header.addWidget(self.model_picker)
        header.addWidget(self.prompt_toggle)
        header.addWidget(self.tool_server_button)
        header.addStretch(1)
        header.addWidget(self.settings_button)
        right_layout.addLayout(header)

        self.system_prompt = QPlainTextEdit(right)
        self.system_prompt.setObjectName("systemPrompt")
        self.system_prompt.setTabChangesFocus(True)
        self.system_prompt.setMaximumHeight(90)
        self.system_prompt.hide()
        right_layout.addWidget(self.system_prompt)
        # A system prompt that came with an imported conversation, waiting to be accepted.
        from .widgets.imported_prompt import ImportedPromptBar

        self.imported_prompt = ImportedPromptBar(right)
        right_layout.addWidget(self.imported_prompt)

        # A conversation file that cannot be used: a page at start-up, a banner later.
        self.storage_notice = StorageNotice(right)
        right_layout.addWidget(self.storage_notice)
        self.transcript = TranscriptView(right)
        right_layout.addWidget(self.transcript, 1)

        # The footer under the last message: a retry in progress, the error, the Resume row.
        self.retry_label = QLabel(self)
        self.retry_label.setObjectName("retryStatus")
        self.retry_label.setWordWrap(True)
        self.retry_label.setTextFormat(Qt.TextFormat.PlainText)
        self.retry_label.setVisible(False)
        self.transcript.add_footer_widget(self.retry_label)
        # A tool card waits for the person's answer (`ui.approvals`).
        self.approval_label = QLabel(self)
        self.approval_label.setObjectName("approvalStatus")
        self.approval_label.setWordWrap(True)
        self.approval_label.setTextFormat(Qt.TextFormat.PlainText)
        self.approval_label.setVisible(False)
        self.transcript.add_footer_widget(self.approval_label)
        self.error_banner = ErrorBanner(self)
        self.transcript.add_footer_widget(self.error_banner)
        resume_row = QWidget(self)
        resume_row.setObjectName("resumeRow")
        resume_layout = QHBoxLayout(resume_row)
        resume_layout.setContentsMargins(0, 0, 0, 0)
        self.resume_label = QLabel(resume_row)
        self.resume_label.setObjectName("resumeLabel")
        self.resume_label.setTextFormat(Qt.TextFormat.PlainText)  # it can name the model's tools
        self.resume_label.setWordWrap(True)
        self.resume_label.setVisible(False)
        self.resume_button = QPushButton(resume_row)
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.resume_button.setVisible(False)
        resume_layout.addWidget(self.resume_label, 1)
        resume_layout.addWidget(self.resume_button)
        self.transcript.add_footer_widget(resume_row)

        self.find_bar = FindBar(right)  # Ctrl+F: find in this conversation
        right_layout.addWidget(self.find_bar)
        composer_row = QHBoxLayout()
        self.composer = Composer(right)
        self.send_button = QPushButton(right)
        self.send_button.setObjectName("sendButton")
        self.stop_button = QPushButton(right)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setVisible(False)
        composer_row.addWidget(self.composer, 1)
        composer_row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        composer_row.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        right_layout.addLayout(composer_row)

        splitter = QSplitter(self)
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)
        self.setTabOrder(self.composer, self.send_button)

    def _build_actions(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QAction, QKeySequence

        def action(shortcut: Any, slot: Any, parent: Any = self) -> QAction:
            act = QAction(parent)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
                act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            self.addAction(act)
            return act

        self.new_action = action(QKeySequence.StandardKey.New, self._new_chat)
        self.rename_action = action(Qt.Key.Key_F2, self._rename_current)
        self.delete_action = action(QKeySequence.StandardKey.Delete, self._delete_current)
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.session_list.addAction(self.rename_action)
        self.session_list.addAction(self.delete_action)
        self.settings_action = action(QKeySequence.StandardKey.Preferences, self.open_settings)
        if self.settings_action.shortcut().isEmpty():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.find_action = action(QKeySequence.StandardKey.Find, self._open_find)
        self.search_action = action(QKeySequence("Ctrl+Shift+F"), self._focus_filter)
        self.focus_composer_action = action(QKeySequence("Ctrl+L"), self.composer.setFocus)
        self.quit_action = action(QKeySequence.StandardKey.Quit, self.close)
        self.about_action = action(None, self.open_about)
        self.check_file_action = action(None, lambda: self.controller.check_file())
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        menu = self.menuBar()
        self.file_menu = file_menu = menu.addMenu("")
        file_menu.setObjectName("fileMenu")
        for act in (self.new_action, self.settings_action, self.quit_action):
            file_menu.addAction(act)
        from .archive import ArchiveActions  # Export, Import, Back up, Restore

        self.archive_actions = ArchiveActions(self)
        self.archive_actions.install(file_menu, before=self.settings_action)
        self.chat_menu = chat_menu = menu.addMenu("")
        chat_menu.setObjectName("conversationMenu")
        for act in (
            self.rename_action,
            self.delete_action,
            self.find_action,
            self.search_action,
            self.focus_composer_action,
        ):
            chat_menu.addAction(act)
        self.help_menu = menu.addMenu("")
        self.help_menu.setObjectName("helpMenu")
        self.help_menu.addAction(self.about_action)
        self.help_menu.addAction(self.check_file_action)

    def _connect_widgets(self) -> None:
        from PySide6.QtCore import QTimer

        from .widgets.reading_column import ReadingColumn

        self.new_chat_button.clicked.connect(self._new_chat)
        self.session_filter.textChanged.connect(self._on_filter_text)
        from PySide6.QtGui import QGuiApplication

        QGuiApplication.clipboard().dataChanged.connect(self._on_copied)
        ReadingColumn(self.transcript)  # capped and centred on wide windows
        self.session_list.selectionModel().currentChanged.connect(self._on_list_current)
        self.composer.submitted.connect(self._send)
        self.composer.stopRequested.connect(self._stop)
        self.send_button.clicked.connect(lambda: self._send(self.composer.toPlainText()))
        self.stop_button.clicked.connect(self._stop)
        self.resume_button.clicked.connect(self._resume)
        self.settings_button.clicked.connect(self.open_settings)
        self.error_banner.settingsWanted.connect(self.open_settings)
        self.storage_notice.restoreRequested.connect(lambda: self.archive_actions.restore())
        self.storage_notice.retryRequested.connect(
            lambda: self.controller.spawn(self.controller.retry_storage(), "try storage again")
        )
        self.model_picker.activated.connect(self._on_model_picked)
        self.prompt_toggle.toggled.connect(self.system_prompt.setVisible)
        self._prompt_timer = QTimer(self)
        self._prompt_timer.setSingleShot(True)
        self._prompt_timer.setInterval(600)
        self._prompt_timer.timeout.connect(self._save_prompt)
        self.system_prompt.textChanged.connect(self._prompt_timer.start)
        self.imported_prompt.accepted.connect(
            lambda: self.controller.spawn(
                self.controller.accept_imported_prompt(), "accept the imported prompt"
            )
        )
        self.imported_prompt.discarded.connect(
            lambda: self.controller.spawn(
                self.controller.discard_imported_prompt(), "discard the imported prompt"
            )
        )
        self.transcript.olderWanted.connect(self._load_older)
        self.transcript.messageAction.connect(self._on_message_action)
        picker = self.model_picker
        self.transcript.model_labels = lambda: [picker.itemText(i) for i in range(picker.count())]

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
            self._tell_language()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set every string of the window in the current language (each is set only here).

        Runs once the widgets are built and on every ``QEvent.LanguageChange`` (a language
        saved in Settings). Rows of the transcript, the composer and the conversation list
        retranslate themselves.
        """
        self._show_title()
        if not self._built:
            return
        self.new_chat_button.setText(self.tr("New chat"))
        self.new_chat_button.setAccessibleName(self.tr("New chat"))
        self.new_chat_button.setToolTip(self.tr("Start a new conversation (Ctrl+N)"))
        self.session_filter.setPlaceholderText(self.tr("Search conversations"))
        self.session_filter.setAccessibleName(self.tr("Search conversation titles and messages"))
        self.search_results.setAccessibleName(self.tr("Messages found"))
        self.session_list.setAccessibleName(self.tr("Conversations"))
        self.model_picker.setAccessibleName(self.tr("Model"))
        self.model_picker.setToolTip(self.tr("The model that answers in this conversation"))
        self.model_picker.setPlaceholderText(self.tr("No model"))
        self.prompt_toggle.setAccessibleName(self.tr("Show the system prompt"))
        self._show_prompt_toggle()
        self.settings_button.setText(self.tr("Settings"))
        self.settings_button.setAccessibleName(self.tr("Settings"))
        self.system_prompt.setAccessibleName(self.tr("System prompt for this conversation"))
        self.system_prompt.setPlaceholderText(
            self.tr(
                "Instructions the model gets with every message of this conversation (optional)"
            )
        )
        self.approval_label.setText(self.tr("Waiting for your answer about a tool"))
        self.resume_button.setText(self.tr("Resume"))
        self.resume_button.setAccessibleName(self.tr("Resume"))
        self.resume_label.setAccessibleName(self.tr("Why the conversation can be resumed"))
        self._show_resume()
        self.send_button.setText(self.tr("Send"))
        self.send_button.setAccessibleName(self.tr("Send"))
        self.send_button.setToolTip(self.tr("Send (Enter)"))
        self.stop_button.setText(self.tr("Stop"))
        self.stop_button.setAccessibleName(self.tr("Stop"))
        # No promise that what arrived is kept: that is said after the write, when it was.
        self.stop_button.setToolTip(self.tr("Stop the answer (Esc)"))
        self.new_action.setText(self.tr("&New chat"))
        self.rename_action.setText(self.tr("&Rename…"))
        self.delete_action.setText(self.tr("&Delete…"))
        self.settings_action.setText(self.tr("&Settings…"))
        self.find_action.setText(self.tr("&Find in this conversation"))
        self.search_action.setText(self.tr("&Search all conversations"))
        self.focus_composer_action.setText(self.tr("Write a &message"))
        self.quit_action.setText(self.tr("&Quit"))
        self.file_menu.setTitle(self.tr("&File"))
        self.archive_actions.retranslate()
        self.chat_menu.setTitle(self.tr("&Conversation"))
        self.about_action.setText(self.tr("&About Continuo"))
        self.check_file_action.setText(self.tr("&Check the conversation file"))
        self.help_menu.setTitle(self.tr("&Help"))
        self._on_filter_text(self.session_filter.text())
        if self.search is not None:
            self.search.retranslate()

    # ------------------------------------------------------------------ polish (issue 10 §3)

    def _show_title(self, *_args: Any) -> None:
        """The window's title names the open conversation: "Title — Continuo"."""
        sid = self.controller.current
        sessions = getattr(self.controller, "sessions", None)  # none before the controller
        info = sessions.info(sid) if sid and sessions is not None else None
        if info is None:  # the bare frame at start-up comes here: it imports nothing more
            self.setWindowTitle(self.tr("Continuo"))
        else:
            from .models.sessions import session_title

            self.setWindowTitle(self.tr("{title} — Continuo").format(title=session_title(info)))

    def _on_filter_text(self, text: str) -> None:
        """Filter the list without opening another conversation; keep the open one selected
        while it is shown, and select it again once the filter is cleared."""
        self._filtering = True
        try:
            self.filter_model.set_query(text)
            self._select_in_list(self.controller.current or "")
        finally:
            self._filtering = False
        self.session_list.set_empty_text(self.tr("No matches") if text else "")

    def _on_copied(self) -> None:
        # Only a copy made in this window (a Copy link, Ctrl+C in a message) is confirmed.
        if self.isActiveWindow() and not self._closing:
            self.statusBar().showMessage(self.tr("Copied"), 2000)

    def open_about(self) -> Any:
        """Help › About: the version, the data folder and the bundled parts' licences."""
        from .about_dialog import AboutDialog

        if getattr(self, "about_dialog", None) is not None and self.about_dialog.isVisible():
            self.about_dialog.raise_()
            return self.about_dialog
        c = self.controller
        dialog = AboutDialog(getattr(c, "data_dir", None), self, spawn=c.spawn if c.ready else None)
        dialog.finished.connect(lambda _result: setattr(self, "about_dialog", None))
        dialog.finished.connect(dialog.deleteLater)
        self.about_dialog = dialog
        dialog.open()
        return dialog

    def _load_older(self) -> None:
        self.controller.spawn(self.controller.load_older(), "older")

    # ------------------------------------------------------------------ start

    def start(self) -> asyncio.Task[Any]:
        """Load the conversations (a controller task); after it, maybe the first-run dialog."""
        return self.controller.spawn(self._start(), "start")

    async def _start(self) -> None:
        await self.controller.start()
        from . import resume_marks

        self.controller.spawn(resume_marks.scan(self.controller), "resume marks")
        # After an unclean exit the file is read in full, once the list is on screen.
        self.controller.spawn(
            self.controller.file_check.after_start(self.session_list.viewport()), "file check"
        )
        if (
            self._first_run_dialog
            and not self.storage_notice.isVisibleTo(self)
            and self.controller.settings_store is not None
            and not self.controller.providers()
        ):
            self.open_settings(first_run=True)

    async def started(self) -> None:
        """Wait until the conversation list is loaded and the remembered one is open."""
        await self.controller.started.wait()

    # ------------------------------------------------------------------ controller → widgets

    def _on_current(self, session_id: str, model: Any) -> None:
        self._shown_session = session_id
        self.transcript.setModel(model)
        if self.search is not None:
            self.search.conversation_changed(session_id)
        self._select_in_list(session_id)
        self.retry_label.setVisible(False)  # another conversation's retry (the next one shows)
        approvals = getattr(self.controller, "approvals", None)
        self.approval_label.setVisible(approvals is not None and approvals.waiting(session_id))
        escape = getattr(self, "escape_denies", None)
        if escape is not None:
            escape.update()
        self._show_tool_servers()
        self._show_title()
        self.rename_action.setEnabled(bool(session_id))
        self.delete_action.setEnabled(bool(session_id))
        if not session_id:
            self._on_resume("", None, "")
            self.error_banner.hide_error()
            self.imported_prompt.show_prompt("")

    def _select_in_list(self, session_id: str) -> None:
        from PySide6.QtCore import QItemSelectionModel

        selection = self.session_list.selectionModel()
        row = self.controller.sessions.row_of(session_id) if session_id else -1
        index = (
            self.filter_model.mapFromSource(self.controller.sessions.index(row, 0))
            if row >= 0
            else None
        )
        if index is None or not index.isValid():
            # Not shown (filtered out): no row is current, so clicking any row opens it.
            selection.blockSignals(True)
            selection.clearCurrentIndex()
            selection.clearSelection()
            selection.blockSignals(False)
            self.session_list.viewport().update()
            return
        if selection.currentIndex() != index:
            selection.blockSignals(True)
            selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            selection.blockSignals(False)
            self.session_list.viewport().update()

    def _on_resume(self, session_id: str, point: Any, busy_text: str) -> None:
        if session_id != (self.controller.current or ""):
            return
        self._current_point = point
        self._busy_text = busy_text
        self._show_resume()

    def _show_resume(self) -> None:
        point, busy_text = self._current_point, self._busy_text
        if busy_text:  # the controller's sentence: it stays in the language it was made in
            self.resume_button.setVisible(False)
            self.resume_label.setText(busy_text)
            self.resume_label.setVisible(True)
            return
        if point is None:
            self.resume_button.setVisible(False)
            self.resume_label.setVisible(False)
            self.resume_button.setToolTip("")
            return
        from .markdown import tooltip_text

        self.resume_label.setText(self.resume_text(point))
        self.resume_label.setToolTip(tooltip_text(point.description))
        self.resume_button.setToolTip(tooltip_text(point.description))
        self.resume_button.setAccessibleDescription(point.description)
        self.resume_label.setVisible(True)
        self.resume_button.setVisible(True)

    def resume_text(self, point: Any) -> str:
        """A short line beside the Resume button saying what happened."""
        from engine import ResumeKind

        # What happened to an answer is said once, by its row: this line says what Resume
        # does (the tooltip has the engine's whole sentence, in the window's language).
        texts = {
            ResumeKind.CALL_MODEL: self.tr("The model has not answered yet."),
            ResumeKind.RECOVER_TOOLS: self.tr("The app stopped while a tool was running."),
            ResumeKind.RETRY_RESPONSE: self.tr("Resume writes the answer again."),
            ResumeKind.CONTINUE_RESPONSE: self.tr("Resume continues the answer."),
        }
        if (
            point.kind is ResumeKind.RECOVER_TOOLS
            and point.not_started == point.unanswered_tool_calls
        ):
            # The store recorded no start for any of them: nothing ran.
            return self.tr("The app stopped before the tool started, so it did not run.")
        return texts.get(point.kind, point.description)

    def _on_error(self, session_id: str, message: str, action: AnyAction, kept: Kept) -> None:
        if session_id != (self.controller.current or ""):
            return
        self.error_banner.show_error(message, action, kept)
        if message:
            self.transcript.scroll_to_bottom()

    def _tell_language(self) -> None:
        """Give the controller the window's language, for the engine's sentences."""
        from .i18n import engine_language

        self.controller.set_language(engine_language())

    def _on_busy(self, session_id: str, busy: bool) -> None:
        if session_id != (self.controller.current or ""):
            return
        self.stop_button.setVisible(busy)
        self.send_button.setVisible(not busy)
        self.send_button.setEnabled(not busy)

    def _on_models(self, choices: list[ModelChoice], current: ModelChoice | None) -> None:
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        for choice in choices:
            self.model_picker.addItem(choice.label, choice)
        if current is not None and current in choices:
            self.model_picker.setCurrentIndex(choices.index(current))
        else:
            self.model_picker.setCurrentIndex(-1)
        self.model_picker.blockSignals(False)

    def _on_system_prompt(self, text: str) -> None:
        self.system_prompt.blockSignals(True)
        self.system_prompt.setPlainText(text)
        self.system_prompt.blockSignals(False)
        self._has_prompt = bool(text)
        self._show_prompt_toggle()

    def _show_prompt_toggle(self) -> None:
        # The dot says this conversation has a system prompt even while it is hidden.
        self.prompt_toggle.setText(
            self.tr("System prompt ●") if self._has_prompt else self.tr("System prompt")
        )

    def _on_settings(self, settings: Any) -> None:
        geometry = getattr(settings, "window_geometry", None)
        if geometry:
            self.restore_geometry_text(geometry)

    def restore_geometry_text(self, geometry: str) -> None:
        """Restore the size and place saved at the last close (once; later calls do nothing)."""
        from PySide6.QtCore import QByteArray

        if getattr(self, "_geometry_restored", False):
            return
        self._geometry_restored = True
        try:
            self.restoreGeometry(QByteArray(base64.b64decode(geometry)))
        except (ValueError, TypeError):
            log.info("stored window geometry ignored")

    def _on_problem(self, message: str) -> None:
        self.statusBar().showMessage(message, 15000)

    def _on_storage_failed(
        self, message: str, action: AnyAction, path: str, at_start: bool
    ) -> None:
        # At start-up nothing could be listed: the notice takes the conversation's place.
        self.storage_notice.show_problem(message, action, path, page=at_start)
        self.transcript.setVisible(not self.storage_notice.is_page)

    def _on_check_started(self, asked: bool) -> None:
        if asked:
            self.statusBar().showMessage(self.tr("Checking the conversation file…"))

    def _on_check_finished(self, asked: bool, damage: object) -> None:
        checking = self.tr("Checking the conversation file…")
        if asked and damage is None:
            self.statusBar().showMessage(
                self.tr("The conversation file was checked: no damage found."), 8000
            )
        elif self.statusBar().currentMessage() == checking:
            self.statusBar().clearMessage()  # the storage notice says what was found

    def _on_input_stored(self, text: str, stored: bool) -> None:
        """The message sent is stored (the composer lets it go) or not (it stays)."""
        if text != self._sending:
            return
        self._sending = ""
        typed = self.composer.toPlainText().strip()
        if stored and typed.startswith(text):
            self.composer.setPlainText(typed[len(text) :].lstrip())  # what was typed since
        elif not stored:
            self.composer.setFocus()

    # ------------------------------------------------------------------ widgets → controller

    def _new_chat(self) -> None:
        self.controller.spawn(self._new_or_empty(), "new chat")
        self.composer.setFocus()

    async def _new_or_empty(self) -> None:
        """Open an empty conversation: the open or the newest one if it has no message yet
        (repeated Ctrl+N does not pile up empty "New conversation" rows), else a new one."""
        c = self.controller
        candidates = [c.current or ""]
        if c.sessions.rowCount():
            from .models.sessions import SESSION_ID_ROLE

            candidates.append(c.sessions.data(c.sessions.index(0, 0), SESSION_ID_ROLE))
        for sid in candidates:
            if sid and not c.is_running(sid) and not await c.storage.load_tail(sid, 1):
                if sid != c.current:
                    await c.open_session(sid)
                if self.session_filter.text():
                    self.session_filter.clear()  # show it in the list
                return
        await c.new_session()
        if self.session_filter.text():
            self.session_filter.clear()

    def _on_list_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        from .models.sessions import SESSION_ID_ROLE

        if not current.isValid() or self._filtering:
            return
        sid = current.data(SESSION_ID_ROLE)
        if sid and sid != self.controller.current:
            self.controller.spawn(self.controller.open_session(sid), "open")

    def _on_message_action(self, action: str, item: Any, text: str) -> None:
        """A message's action (`ui.widgets.message_actions`): copy, a new version, a switch
        between versions, a branch into a new chat."""
        from PySide6.QtGui import QGuiApplication

        c = self.controller
        if action == "copy":
            QGuiApplication.clipboard().setText(item.text)
            self.statusBar().showMessage(self.tr("Message copied"), 3000)
            return
        sid = c.current
        if sid and c.is_running(sid):
            self.statusBar().showMessage(
                self.tr("Wait for the answer to finish, or stop it, first."), 5000
            )
            return
        if action == "regenerate":
            c.regenerate(item.key)
        elif action.startswith("regenerate_with:"):
            self._regenerate_with(item, int(action.split(":", 1)[1]))
        elif action == "edit":
            c.edit(item.key, text)
        elif action in ("previous", "next"):
            step = -1 if action == "previous" else 1
            c.spawn(c.switch_version(item.key, step), "switch version")
        elif action == "branch":
            c.spawn(c.branch_into_new_chat(item.key), "branch into a new chat")

    def _regenerate_with(self, item: Any, index: int) -> None:
        """Regenerate with the picker's ``index``th model, which the conversation keeps."""
        from .model_catalog import ModelChoice

        choice = self.model_picker.itemData(index)
        if not isinstance(choice, ModelChoice):
            return
        self.model_picker.setCurrentIndex(index)
        c = self.controller

        async def run() -> None:
            await c.choose_model(choice)
            c.regenerate(item.key)

        c.spawn(run(), "regenerate with another model")

    def _send(self, text: str) -> None:
        # The text stays in the composer until the message is stored (`_on_input_stored`):
        # a message that could not be stored is still there to send again.
        if not text.strip() or self._sending:
            return  # a message on its way stays in the composer until it is stored
        if self.controller.is_running(self.controller.current or ""):
            self.statusBar().showMessage(
                self.tr("An answer is still coming; press Esc to stop it."), 5000
            )
            return
        if self.controller.send(text) is not None:
            self._sending = text.strip()

    def _on_message_stored(self, _session_id: str, text: str) -> None:
        if self.composer.toPlainText().strip() == text.strip():
            self.composer.clear()

    def _on_retry(self, session_id: str, retry: Any) -> None:
        if session_id != (self.controller.current or ""):
            return
        if retry is None:
            self.retry_label.setVisible(False)
            self.retry_label.clear()
            return
        self.retry_label.setText(self.retry_text(retry))
        self.retry_label.setToolTip(self._error_sentence(retry.error))
        self.retry_label.setVisible(True)
        self.transcript.scroll_to_bottom()

    def _show_tool_servers(self) -> None:
        servers = getattr(self.controller, "tool_servers", None)
        if servers is None:  # the placeholder before the controller is attached
            return
        # The conversation shown (its metadata is loaded), not one still being opened.
        sid = self._shown_session
        offered = self.controller.offered_servers(sid) if sid else servers.names()
        self.tool_server_button.set_servers(servers.names(), offered, sid)

    def _on_offer_changed(self, sid: str, server: str, offered: bool) -> None:
        if sid:
            self.controller.spawn(
                self.controller.offer_server(sid, server, offered), "offer tool server"
            )

    def _on_tool_server_failed(self, server: str, error: str) -> None:
        self._on_problem(
            self.tr(
                "The tool server {server} could not start, so its tools are not offered: {error}"
            ).format(server=server, error=error)
        )

    def _on_tool_servers_starting(self, session_id: str, starting: bool) -> None:
        if session_id != self._shown_session:
            return
        text = self.tr("Starting the tool servers…")
        if starting:
            self.statusBar().showMessage(text)
        elif self.statusBar().currentMessage() == text:
            self.statusBar().clearMessage()

    def open_tool_settings(self) -> Any:
        """Open Settings at its Tools page (the Tools button's "Set up tools…")."""
        dialog = self.open_settings()
        if dialog is not None:
            dialog.tabs.setCurrentWidget(dialog.toolsPage)
        return dialog

    def _on_approval_waiting(self, session_id: str, waiting: bool) -> None:
        self.escape_denies.update()
        if session_id != (self.controller.current or ""):
            return
        self.approval_label.setVisible(waiting)
        if waiting:
            self.transcript.scroll_to_bottom()

    def retry_text(self, retry: Any) -> str:
        """The line "Retrying in 0.4 s, 2 of 4…" for the engine's `RetryInfo`."""
        return self.tr("Retrying in {delay} s, {attempt} of {attempts}…").format(
            delay=self.locale().toString(float(retry.delay), "f", 1),
            attempt=retry.attempt,
            attempts=retry.attempts,
        )

    def _error_sentence(self, error: Any) -> str:
        sentence = getattr(error, "sentence", None)
        return str(sentence(getattr(self.controller, "language", "en"))) if sentence else ""

    def _stop(self) -> None:
        self.controller.stop()

    def _resume(self) -> None:
        if self.controller.resume() is not None:
            self.resume_button.setVisible(False)

    def _on_model_picked(self, index: int) -> None:
        from .model_catalog import ModelChoice

        choice = self.model_picker.itemData(index)
        if isinstance(choice, ModelChoice):
            self.controller.spawn(self.controller.choose_model(choice), "choose model")

    def _save_prompt(self) -> None:
        text = self.system_prompt.toPlainText().strip()
        self.controller.spawn(self.controller.set_system_prompt(text), "system prompt")
        self._has_prompt = bool(text)
        self._show_prompt_toggle()

    def _focus_filter(self) -> None:
        self.session_filter.setFocus()
        self.session_filter.selectAll()

    def _on_migration_progress(self, done: float) -> None:
        if done >= 1.0:
            self.statusBar().showMessage(self.tr("The conversations can now be searched."), 5000)
        else:
            self.statusBar().showMessage(
                self.tr("Preparing the conversations for search: {percent}%…").format(
                    percent=int(done * 100)
                )
            )

    def _on_paths_mended(self, mended: list[Any]) -> None:
        """Say which conversations opening the file put back on their newest messages."""
        if len(mended) == 1 and mended[0].title:
            text = self.tr(
                "Restored the conversation “{title}” to its newest messages (the app had "
                "stopped while changing it)."
            ).format(title=mended[0].title)
        elif len(mended) == 1:
            text = self.tr(
                "Restored a conversation to its newest messages (the app had stopped while "
                "changing it)."
            )
        else:
            text = self.tr(
                "Restored {count} conversations to their newest messages (the app had stopped "
                "while changing them)."
            ).format(count=len(mended))
        self.statusBar().showMessage(text, 30000)

    def _open_find(self) -> None:
        if self.search is not None and self.controller.current:
            self.search.open_find()

    def _rename_current(self) -> None:
        from PySide6.QtWidgets import QInputDialog

        sid = self.controller.current
        if not sid:
            return
        info = self.controller.sessions.info(sid)
        dialog = QInputDialog(self)
        dialog.setObjectName("renameDialog")
        dialog.setWindowTitle(self.tr("Rename conversation"))
        dialog.setLabelText(self.tr("Title:"))
        dialog.setTextValue(getattr(info, "title", None) or "")
        self._fit_rename(dialog)
        dialog.textValueSelected.connect(
            lambda title: self.controller.spawn(
                self.controller.rename_session(sid, title), "rename"
            )
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _fit_rename(self, dialog: Any) -> None:
        """Size the Rename dialog so its title bar and its field show their whole text."""
        from PySide6.QtWidgets import QLineEdit

        metrics = dialog.fontMetrics()
        screen = self.screen()
        cap = int(screen.availableGeometry().width() * 0.8) if screen is not None else 1200
        field = dialog.findChild(QLineEdit)
        text_width = metrics.horizontalAdvance(dialog.textValue() or "M" * 30) + 32
        if field is not None:
            field.setMinimumWidth(min(text_width, cap - 48))
        # A title bar needs room for the title and the window buttons beside it.
        width = max(metrics.horizontalAdvance(dialog.windowTitle()) + 160, text_width + 48, 360)
        dialog.resize(min(width, cap), dialog.sizeHint().height())

    def _delete_current(self) -> None:
        sid = self.controller.current
        if not sid:
            return
        info = self.controller.sessions.info(sid)
        from .models.sessions import session_title
        from .widgets.dialog_buttons import confirm_box

        box, delete = confirm_box(
            self,
            "deleteDialog",
            title=self.tr("Delete conversation"),
            text=self.tr("Delete “{title}”? This cannot be undone.").format(
                title=session_title(info)
            ),
            action=self.tr("Delete"),
        )

        def done(_result: int) -> None:
            if box.clickedButton() is delete:
                self.controller.spawn(self.controller.delete_session(sid), "delete")
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    def open_settings(self, first_run: bool = False) -> Any:
        """Open the settings dialog (non-blocking); returns it."""
        store = self.controller.settings_store
        if store is None:
            return None
        if self.settings_dialog is not None:  # open already (a closed one is forgotten)
            self.settings_dialog.raise_()
            return self.settings_dialog
        from .settings_dialog import SettingsDialog

        dialog = SettingsDialog(store, self, first_run=bool(first_run))
        dialog.settingsChanged.connect(
            lambda: self.controller.spawn(self.controller.reload_settings(), "reload settings")
        )
        # The closed dialog is deleted: forget it first, or the next open would touch a
        # deleted C++ object (Settings opened only once per run).
        dialog.finished.connect(lambda _result: self._forget_settings_dialog(dialog))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _forget_settings_dialog(self, dialog: Any) -> None:
        if self.settings_dialog is dialog:
            self.settings_dialog = None
        dialog.deleteLater()

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._closing:
            event.accept()
            return
        event.ignore()
        if not self.controller.ready:
            self._close_pending = True  # attach() closes it properly (the store is not open)
            return
        self._closing = True
        self.controller.spawn(self._close(), "close")

    async def _close(self) -> None:
        try:
            settings = self.controller.settings
            if settings is not None:
                settings.window_geometry = base64.b64encode(
                    bytes(self.saveGeometry().data())
                ).decode()
                try:
                    await self.controller.save_settings()
                except Exception as exc:  # losing the geometry must not block quitting
                    log.warning("window geometry not saved: %s", exc)
            await self.controller.close()
        finally:
            if shiboken6.isValid(self):  # not deleted meanwhile (a test's widget cleanup)
                self.hide()
                self.closed.emit()
                self.close()

    def activate(self) -> None:
        """Bring the window to the front (a second launch asked for it)."""
        self.activations += 1
        self.showNormal()
        self.raise_()
        self.activateWindow()

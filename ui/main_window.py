"""The main window: the conversation list, the transcript, the composer and the Resume row.

It lays the widgets out and wires them: what the person does goes to the part that acts on it,
what the controller announces to the widget that shows it. Each job is a part's:
`ui.conversation.commands` (send, Resume, new, rename, delete, a message's actions),
`ui.window.error_banner` (a failure; its words are `ui.common.errors`'), `ui.conversation.resume_bar`,
`ui.conversation.retry_line`, `ui.tools.tool_status` (servers offered, starting or failing; a card
waiting), `ui.window.status_line`, `ui.window.menus`, `ui.window.dialogs`, `ui.search.window_search` and
`ui.archive`. It awaits nothing itself: all work is a controller task. Dialogs open with
``open()``, never a nested ``exec()``. DESIGN.md's object names stay stable (``sessionList``,
``newChatButton``, ``transcript``, ``composer``, ``sendButton``, ``stopButton``,
``resumeButton``, ``modelPicker``, ``resumeLabel``, ``errorBanner``, ``sessionFilter``). Under
the last message, ``retryStatus``, ``approvalStatus``, ``errorBanner`` and the Resume row are
permanent children shown with ``setVisible``, so an error reads under what streamed before it.

It is built in three steps, so that it is on screen before the slow parts load:

1. ``MainWindow(frame_only=True)``: the bare frame (title, size, the theme's colours). This
   module imports almost nothing at its top: PySide6 creates each Qt class and its enums on
   first touch (about 80 ms for this window's), so Qt names are imported where they are used.
2. `build_contents`: every widget, action and menu, still without the engine; the window talks
   to a `ControllerPlaceholder` until step 3 (every action valid, doing nothing).
3. `attach`: the `Controller` (the engine, the store, the network) is given and connected.

`ui.app.main` shows the frame and waits for its first paint before steps 2 and 3;
`ui.app.build_window` (tests, screenshots, benchmarks) does all three at once. Closing stops
running requests (their partial answers are stored), saves the geometry, closes the store,
then emits `closed`.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QBoxLayout, QMainWindow

from .controller_placeholder import ControllerPlaceholder, WindowController

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QCloseEvent

    from engine import RetryInfo

    from .common.errors import AnyAction, Kept
    from .controller import Controller
    from .conversation.transcript import TranscriptModel
    from .search.window_search import WindowSearch
    from .settings.dialog import SettingsDialog
    from .settings.store import Settings
    from .window.about_dialog import AboutDialog

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
        self.controller: WindowController = ControllerPlaceholder()
        self._attached: Controller | None = None
        self._first_run_dialog = first_run_dialog
        self._closing = False
        self._close_pending = False  # closed before the controller arrived
        self._geometry_restored = False
        self._sidebar_restored = False
        self.activations = 0  # times a second launch brought this window forward
        self.search: WindowSearch | None = None  # once the widgets are built
        self.setObjectName("mainWindow")
        # Sizes are in device-independent pixels: at 200% a 1080p screen is 960x540 of them,
        # so the first size is capped to the screen, and the smallest one still fits it.
        self.setMinimumSize(480, 400)  # narrower than 600 or so, the list folds away
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
        """Build the widgets, actions and menus and their parts (step 2; once)."""
        if self._built:
            return
        self._built = True
        self._build()
        from .conversation.commands import CommandWidgets, ConversationCommands
        from .search.window_search import WindowSearch
        from .tools.tool_status import ToolStatus, ToolWidgets
        from .window.dialogs import WindowDialogs
        from .window.menus import MenuSlots, WindowMenus
        from .window.status_line import StatusLine

        self.status_line = StatusLine(self.statusBar(), self)
        self.dialogs = WindowDialogs(self, lambda: self.controller)
        say = self.statusBar().showMessage
        self.commands = ConversationCommands(
            CommandWidgets(self, self.composer, self.model_picker, self.session_filter, say),
            lambda: self.controller,
            self,
        )
        tools = ToolWidgets(
            self,
            self.tool_server_button,
            self.transcript,
            self.statusBar(),
            self.status_line.problem,
        )
        self.tool_status = ToolStatus(tools, self)
        self.approval_label = self.tool_status.approval_line
        for widget in (self.retry_label, self.approval_label, self.error_banner, self.resume_bar):
            self.transcript.add_footer_widget(widget)  # under the last message
        self.menus = WindowMenus(
            self,
            MenuSlots(
                new_chat=self.commands.new_chat,
                rename=self.commands.rename_current,
                delete=self.commands.delete_current,
                settings=self.open_settings,
                find=self._open_find,
                search=self.sidebar.focus_filter,
                write=self.composer.setFocus,
                quit=self.close,
                about=self.open_about,
                check_file=lambda: self.controller.check_file(),
            ),
            self.session_list,
        )
        self._connect_widgets()
        self.search = WindowSearch(
            self.sidebar.search_widgets(self.find_bar, self.transcript, self.composer, say), self
        )
        self.retranslate()

    def attach(self, controller: Controller) -> None:
        """Give the window its controller (step 3) and connect the two."""
        from PySide6.QtCore import QTimer

        from .archive.host import WindowArchiveHost
        from .conversation import resume_marks
        from .conversation.drafts import ComposerDrafts

        self.build_contents()
        self.controller = self._attached = c = controller
        controller.setParent(self)
        # unsent text stays with its conversation (before the first one is shown)
        self.drafts = ComposerDrafts(
            self.composer, controller, controller.currentChanged, controller.messageStored, self
        )
        self.sidebar.set_sessions(controller.sessions)
        if self.search is not None:
            self.search.attach(controller)
        self.menus.archive_actions.attach(
            WindowArchiveHost(
                controller,
                say=self.statusBar().showMessage,
                select=self.sidebar.select,
                refresh_search=lambda: self.search.refresh() if self.search is not None else None,
            )
        )
        self.tool_status.attach(controller, controller.tool_servers, controller.approvals)
        resume_marks.follow(controller)  # the list's marks on conversations waiting for Resume
        status = self.status_line
        c.currentChanged.connect(self._on_current)
        # What concerns one conversation is shown while it is the one shown.
        c.resumeChanged.connect(self._shown_only(self.resume_bar.show_point))
        c.errorChanged.connect(self._shown_only(self._show_error))
        c.retryChanged.connect(self._shown_only(self._show_retry))
        c.busyChanged.connect(self._shown_only(self.composer_bar.set_busy))
        c.modelsChanged.connect(self.model_picker.set_choices)
        c.systemPromptChanged.connect(self.system_prompt.show_prompt)
        c.importedPromptChanged.connect(self.imported_prompt.show_prompt)
        c.settingsLoaded.connect(self._on_settings)
        c.storageFailed.connect(self._on_storage_failed)
        c.sessions.dataChanged.connect(self._show_title)
        c.messageStored.connect(self.commands.message_stored)
        c.inputStored.connect(self.commands.input_stored)
        c.problem.connect(status.problem)
        c.migrationProgress.connect(status.migration_progress)
        c.pathsMended.connect(status.paths_mended)
        c.file_check.started.connect(status.check_started)
        c.file_check.finished.connect(status.check_finished)
        self._tell_language()
        if self._close_pending:
            QTimer.singleShot(0, self.close)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        from PySide6.QtWidgets import QVBoxLayout, QWidget

        from .conversation.composer import ComposerBar
        from .conversation.imported_prompt import ImportedPromptBar
        from .conversation.resume_bar import ResumeBar
        from .conversation.retry_line import RetryLine
        from .conversation.system_prompt import SystemPromptEditor
        from .conversation.transcript_view import TranscriptView
        from .search.find_bar import FindBar
        from .window.error_banner import ErrorBanner
        from .window.header import ConversationHeader
        from .window.side_split import SIDEBAR_WIDTH, SideSplitter
        from .window.sidebar import Sidebar
        from .window.storage_notice import StorageNotice

        # Left: New chat, the search field, the list, the messages found.
        self.sidebar = Sidebar(lambda: self.controller.current, self)
        self.new_chat_button = self.sidebar.new_chat_button
        self.session_filter = self.sidebar.session_filter
        self.filter_model = self.sidebar.filter_model
        self.session_list = self.sidebar.session_list
        self.search_label = self.sidebar.search_label
        self.search_results = self.sidebar.search_results

        # Right: header (model, system prompt, tools, settings), transcript, composer. Made
        # in the order Tab visits them.
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 8, 8, 8)
        self.header = ConversationHeader(right)
        self.model_picker = self.header.model_picker
        self.prompt_toggle = self.header.prompt_toggle
        self.settings_button = self.header.settings_button
        self.tool_server_button = self.header.tool_server_button
        self.system_prompt = SystemPromptEditor(self.prompt_toggle, right)
        # A system prompt that came with an imported conversation, waiting to be accepted.
        self.imported_prompt = ImportedPromptBar(right)
        # A conversation file that cannot be used: a page at start-up, a banner later.
        self.storage_notice = StorageNotice(right)
        self.transcript = TranscriptView(right)
        # Under the last message: a retry in progress, a card waiting, the error, Resume.
        self.retry_label = RetryLine(self)
        self.error_banner = ErrorBanner(self)
        self.resume_bar = ResumeBar(self)
        self.resume_button = self.resume_bar.button
        self.resume_label = self.resume_bar.label
        self.find_bar = FindBar(right)  # Ctrl+F: find in this conversation
        self.composer_bar = ComposerBar(right)
        self.composer = self.composer_bar.composer
        self.transcript.take_keys_from(self.composer)  # Alt+Up, Shift+F10 from the composer
        self.send_button = self.composer_bar.send_button
        self.stop_button = self.composer_bar.stop_button
        for widget, stretch in (
            (self.header, 0),
            (self.system_prompt, 0),
            (self.imported_prompt, 0),
            (self.storage_notice, 0),
            (self.transcript, 1),
            (self.find_bar, 0),
            (self.composer_bar, 0),
        ):
            right_layout.addWidget(widget, stretch)

        # The list gives way to a narrow window first, then folds away (`SideSplitter`).
        self.splitter = splitter = SideSplitter(self)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([SIDEBAR_WIDTH, 840])
        header_layout = self.header.layout()
        assert isinstance(header_layout, QBoxLayout)
        header_layout.insertWidget(0, splitter.button)  # brings the folded list back
        self.setCentralWidget(splitter)

    def _connect_widgets(self) -> None:
        from PySide6.QtGui import QGuiApplication

        from .window.reading_column import ReadingColumn

        commands = self.commands

        def c() -> WindowController:
            return self.controller

        ReadingColumn(self.transcript)  # capped and centred on wide windows
        QGuiApplication.clipboard().dataChanged.connect(self._on_copied)
        self.new_chat_button.clicked.connect(commands.new_chat)
        self.sidebar.openRequested.connect(lambda sid: c().spawn(c().open_session(sid), "open"))
        self.sidebar.openRequested.connect(lambda _sid: self.splitter.fold_if_narrow())
        self.new_chat_button.clicked.connect(self.splitter.fold_if_narrow)
        self.composer_bar.sendRequested.connect(commands.send)
        self.composer_bar.stopRequested.connect(commands.stop)
        self.resume_bar.resumeRequested.connect(self._resume)
        self.model_picker.activated.connect(commands.pick_model)
        self.transcript.olderWanted.connect(commands.load_older)
        self.transcript.messageAction.connect(commands.message_action)
        picker = self.model_picker
        self.transcript.model_labels = lambda: [picker.itemText(i) for i in range(picker.count())]
        self.settings_button.clicked.connect(self.open_settings)
        self.tool_server_button.setupRequested.connect(self.open_tool_settings)
        self.error_banner.settingsWanted.connect(self.open_settings)
        self.storage_notice.restoreRequested.connect(lambda: self.menus.archive_actions.restore())
        self.storage_notice.retryRequested.connect(
            lambda: c().spawn(c().retry_storage(), "try storage again")
        )
        self.imported_prompt.accepted.connect(
            lambda: c().spawn(c().accept_imported_prompt(), "accept the imported prompt")
        )
        self.imported_prompt.discarded.connect(
            lambda: c().spawn(c().discard_imported_prompt(), "discard the imported prompt")
        )
        self.system_prompt.edited.connect(
            lambda text: c().spawn(c().set_system_prompt(text), "system prompt")
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
            self._tell_language()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set every string of the window in the current language (each is set only here).

        Runs once the widgets are built and on every ``QEvent.LanguageChange`` (a language
        saved in Settings). The sidebar, the header, the system prompt, the footer's widgets,
        the rows of the transcript and the composer retranslate themselves.
        """
        self._show_title()
        if not self._built:
            return
        self.tool_status.retranslate()
        self.menus.retranslate()
        if self.search is not None:
            self.search.retranslate()

    def _tell_language(self) -> None:
        """Give the controller the window's language, for the engine's sentences."""
        from .common.i18n import engine_language

        self.controller.set_language(engine_language())

    # ------------------------------------------------------------------ the title

    def _show_title(self, *_args: Any) -> None:
        """The window's title names the open conversation: "Title — Continuo"."""
        sid = self.controller.current
        info = self.controller.session_info(sid) if sid else None
        if info is None:  # the bare frame at start-up comes here: it imports nothing more
            self.setWindowTitle(self.tr("Continuo"))
        else:
            from .conversation.sessions import session_title

            self.setWindowTitle(self.tr("{title} — Continuo").format(title=session_title(info)))

    def _open_find(self) -> None:
        if self.search is not None and self.controller.current:
            self.search.open_find()

    def _on_copied(self) -> None:
        # Only a copy made in this window (a Copy link, Ctrl+C in a message) is confirmed.
        if self.isActiveWindow() and not self._closing:
            self.status_line.copied()

    # ------------------------------------------------------------------ controller → widgets

    def _on_current(self, session_id: str, model: TranscriptModel | None) -> None:
        self.transcript.setModel(model)
        if self.search is not None:
            self.search.conversation_changed(session_id)
        self.sidebar.select(session_id)
        self.retry_label.setVisible(False)  # another conversation's retry (the next one shows)
        self.tool_status.conversation_shown(session_id)
        self._show_title()
        self.menus.conversation_shown(session_id)
        if not session_id:
            self.resume_bar.show_point(None)
            self.error_banner.hide_error()
            self.imported_prompt.show_prompt("")

    def _shown_only(self, show: Callable[..., None]) -> Callable[..., None]:
        """``show``, for news of the conversation shown (news of another is dropped)."""

        def slot(session_id: str, *news: Any) -> None:
            if session_id == (self.controller.current or ""):
                show(*news)

        return slot

    def _show_error(self, message: str, action: AnyAction, kept: Kept) -> None:
        self.error_banner.show_error(message, action, kept)
        if message:
            self.transcript.scroll_to_bottom()

    def _show_retry(self, retry: RetryInfo | None) -> None:
        language = self._attached.language if self._attached is not None else "en"
        self.retry_label.show_retry(retry, language)
        if retry is not None:
            self.transcript.scroll_to_bottom()

    def _resume(self) -> None:
        if self.commands.resume():
            self.resume_bar.resuming()

    def _on_storage_failed(
        self, message: str, action: AnyAction, path: str, at_start: bool
    ) -> None:
        # At start-up nothing could be listed: the notice takes the conversation's place.
        self.storage_notice.show_problem(message, action, path, page=at_start)
        if self.storage_notice.is_page:
            self.sidebar.set_listed(False)  # nothing could be read: not "nothing yet"
        self.transcript.setVisible(not self.storage_notice.is_page)

    # ------------------------------------------------------------------ settings and dialogs

    def _on_settings(self, settings: Settings) -> None:
        if settings.window_geometry:
            self.restore_geometry_text(settings.window_geometry)
        self.restore_sidebar_width(settings.sidebar_width)

    def restore_sidebar_width(self, width: int | None) -> None:
        """Give the conversation list the width it had at the last close (once)."""
        if self._built and not self._sidebar_restored and width:
            self._sidebar_restored = True
            self.splitter.set_preferred(width)

    def restore_geometry_text(self, geometry: str) -> None:
        """Restore the size and place saved at the last close (once; later calls do nothing)."""
        from PySide6.QtCore import QByteArray

        if self._geometry_restored:
            return
        self._geometry_restored = True
        try:
            self.restoreGeometry(QByteArray(base64.b64decode(geometry)))
        except (ValueError, TypeError):
            log.info("stored window geometry ignored")

    def open_settings(self, first_run: bool = False) -> SettingsDialog | None:
        """Open the settings dialog (non-blocking); returns it (None before it can be)."""
        return self.dialogs.open_settings(first_run)

    def open_tool_settings(self) -> SettingsDialog | None:
        """Open Settings at its Tools page."""
        return self.dialogs.open_tool_settings()

    def open_about(self) -> AboutDialog:
        """Help › About."""
        return self.dialogs.open_about()

    @property
    def settings_dialog(self) -> SettingsDialog | None:
        """The Settings dialog while it is open."""
        return self.dialogs.settings

    # ------------------------------------------------------------------ start

    def _controller(self) -> Controller:
        if self._attached is None:
            raise RuntimeError("the window has no controller yet (MainWindow.attach)")
        return self._attached

    def start(self) -> asyncio.Task[Any]:
        """Load the conversations (a controller task); after it, maybe the first-run dialog."""
        c = self._controller()
        return c.spawn(self._start(c), "start")

    async def _start(self, c: Controller) -> None:
        from .conversation import resume_marks

        await c.start()
        # Read (or not): only now may an empty list say that there is nothing yet.
        self.sidebar.set_listed(not self.storage_notice.is_page)
        c.spawn(resume_marks.scan(c), "resume marks")
        # After an unclean exit the file is read in full, once the list is on screen.
        c.spawn(c.file_check.after_start(self.session_list.viewport()), "file check")
        if (
            self._first_run_dialog
            and not self.storage_notice.isVisibleTo(self)
            and c.settings_store is not None
            and not c.providers()
        ):
            self.open_settings(first_run=True)

    async def started(self) -> None:
        """Wait until the conversation list is loaded and the remembered one is open."""
        await self._controller().started.wait()

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._closing:
            event.accept()
            return
        event.ignore()
        c = self._attached
        if c is None:
            self._close_pending = True  # attach() closes it properly (the store is not open)
            return
        self._closing = True
        c.spawn(self._close(c), "close")

    async def _close(self, c: Controller) -> None:
        try:
            if c.settings is not None:
                c.settings.window_geometry = base64.b64encode(
                    bytes(self.saveGeometry().data())
                ).decode()
                c.settings.sidebar_width = self.splitter.preferred
                try:
                    await c.save_settings()
                except Exception as exc:  # losing the geometry must not block quitting
                    log.warning("window geometry not saved: %s", exc)
            await self.drafts.flush()
            await c.close()
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

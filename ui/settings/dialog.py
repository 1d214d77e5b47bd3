"""The settings dialog: providers and their keys, what was found on this computer, language, look.

Owns `SettingsDialog` (objectName ``settingsDialog``). It is opened with ``open()`` — never a
nested ``exec()``, which would re-enter the qasync loop — and does all its waiting in tasks
it owns: loading settings, looking for local servers, testing a connection, saving. It emits
``settingsChanged`` after every successful save.

Four pages:

- **Providers** (`ui.settings.provider_page.ProviderPage`): add, edit and remove OpenAI-compatible,
  Anthropic and Ollama endpoints, make one the default, and "Test connection". Without an OS
  keychain a visible warning above the pages says keys are kept in a file only this user can
  read.
- **Found on this computer** (the first-run page): local model servers that answered and API
  keys set in the environment, each added with one click (which saves at once).
- **Language and look**: System / English / 简体中文 and System / Light / Dark.
- **Tools** (`ui.settings.tools_page.ToolsPage`): the MCP servers kept in ``mcp.json``
  (`ui.settings.mcp_file`), their state and tools, import and presets; written with the same Save/Apply.
- **Tool approval** (`ui.settings.approval_settings.ApprovalSettings`): ask before every tool
  or let read-only ones run, and the always-allowed tools, each with Revoke.

Save writes and closes; Apply writes and stays open. A save applies the theme and installs the
new language at once (`ui.common.i18n.install_translator`): Qt then sends ``QEvent.LanguageChange``
to every widget, and each of ours sets its strings again in its ``retranslate`` method, this
dialog included.

Signals for tests and the window: ``loaded`` (settings read), ``discoveryFinished``,
``connectionTested(ok, message)``, ``saved``, ``settingsChanged``.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..common.dialog_buttons import Standard, button_row
from ..common.errors import describe_error
from ..common.i18n import engine_language, install_translator, installed_language
from ..common.tasks import OwnedTasks
from ..common.theme import apply_palette
from .approval_settings import ApprovalSettings
from .first_run import DEFAULT_SERVERS, Discovery, LocalServer, discover
from .mcp_file import MCPFile, ServerEntry
from .provider_page import TEST_TIMEOUT, ProviderPage
from .store import (
    ProviderConfig,
    Settings,
    SettingsError,
    SettingsFileError,
    SettingsStore,
    ToolApproval,
)
from .tools_page import ToolsPage

__all__ = ["TEST_TIMEOUT", "SettingsDialog"]

log = logging.getLogger(__name__)

# The Providers page's widgets, also reachable as attributes of the dialog (tests use them).
_PAGE_WIDGETS = (
    "providerList",
    "addProviderButton",
    "removeProviderButton",
    "providerForm",
    "providerKind",
    "providerName",
    "providerBaseUrl",
    "providerApiKey",
    "forgetKeyButton",
    "providerModel",
    "providerDefault",
    "testConnectionButton",
    "connectionResult",
)


@dataclass(slots=True)
class _SaveRequest:
    """What one save writes, taken from the widgets when the person asked for it."""

    providers: list[ProviderConfig]
    keys: dict[str, str]  # provider id → key to store ("" = forget)
    removed: set[str]
    default_provider_id: str | None
    language: str
    theme: str
    tools: list[ServerEntry] | None = None  # the MCP servers; None: leave mcp.json alone
    tool_approval: ToolApproval = ToolApproval.ASK
    # always-allowed tools revoked in the dialog (the rest of the list stays as saved)
    revoked_tools: list[tuple[str, str]] = field(default_factory=list)

    def __repr__(self) -> str:  # holds keys: never show them
        return f"_SaveRequest({len(self.providers)} providers, {len(self.keys)} keys)"


class _FoundRow(QWidget):
    """One thing the first-run page found, with its Add button (objectName ``addFoundButton``)."""

    def __init__(self, found: Discovery, already: bool, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("foundRow")
        self.found = found
        self.added = already and found.api_key is None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.button = QPushButton(self)
        self.button.setObjectName("addFoundButton")
        self.button.setProperty("source", found.source)
        self.button.setEnabled(not self.added)
        layout.addWidget(self.button)
        self.retranslate()

    def mark_added(self) -> None:
        self.added = True
        self.retranslate()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        found = self.found
        if found.api_key is not None:
            detail = self.tr("API key from {variable}").format(variable=found.source)
        else:
            detail = self.tr("running at {address}, %n model(s)", "", len(found.models)).format(
                address=found.source
            )
        self.label.setText(f"<b>{html.escape(found.config.name)}</b> — {html.escape(detail)}")
        self.button.setText(self.tr("Added") if self.added else self.tr("Add"))
        self.button.setAccessibleName(
            self.tr("Add {name}").format(name=found.config.name)
            if not self.added
            else self.tr("Added")
        )


class SettingsDialog(QDialog):
    """Edit providers, keys, language and theme. Open with ``open()``.

    Args:
        store: where settings and keys are kept.
        parent: the window; the dialog is modal to it.
        servers: the local servers the first-run page looks for (tests inject ports).
        environ: the environment to read API keys from (default ``os.environ``).
        first_run: open on the "Found on this computer" page.
        tool_servers: the running MCP servers (`ui.settings.tools_page.ToolRuntime` says what it
            needs); by default the parent's ``controller.tool_servers`` if it has one.
    """

    settingsChanged = Signal()
    loaded = Signal()
    discoveryFinished = Signal()
    connectionTested = Signal(bool, str)
    saved = Signal()

    def __init__(
        self,
        store: SettingsStore,
        parent: QWidget | None = None,
        *,
        servers: Sequence[LocalServer] = DEFAULT_SERVERS,
        environ: Mapping[str, str] | None = None,
        first_run: bool = False,
        tool_servers: Any = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setModal(True)
        self.resize(760, 520)

        self._store = store
        self._servers = tuple(servers)
        self._environ = environ
        if tool_servers is None:
            tool_servers = getattr(getattr(parent, "controller", None), "tool_servers", None)
        self._tool_servers = tool_servers
        self._settings = Settings()
        self._found: list[Discovery] | None = None  # None while looking
        # probes, tests and saves; saves (``keep``) finish even if the dialog closes
        self._tasks = OwnedTasks("settings dialog", self._task_failed)
        self.is_loaded = False
        self.is_saving = False
        self._keychain_known = False  # whether a keychain exists is known once settings load

        self._build()
        self.retranslate()
        self.finished.connect(self._cancel_background)
        if first_run:
            self.tabs.setCurrentWidget(self.firstRunPage)
        self._spawn(self._load())
        self._spawn(self._discover())

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        outer = QVBoxLayout(self)

        self.keychainWarning = QLabel(self)
        self.keychainWarning.setObjectName("keychainWarning")
        self.keychainWarning.setWordWrap(True)
        self.keychainWarning.setVisible(False)
        outer.addWidget(self.keychainWarning)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("settingsTabs")
        self.tabs.currentChanged.connect(lambda _index: self._show_keychain_warning())
        outer.addWidget(self.tabs, 1)
        self.providersPage = ProviderPage(self._store, self._spawn, self)
        self.providersPage.connectionTested.connect(self.connectionTested)
        for name in _PAGE_WIDGETS:
            setattr(self, name, getattr(self.providersPage, name))
        self.providersPage.addProviderButton.clicked.connect(
            lambda: self.tabs.setCurrentWidget(self.providersPage)
        )
        self.firstRunPage = self._build_first_run_page()
        self.appearancePage = self._build_appearance_page()
        self.toolsPage = ToolsPage(
            MCPFile(self._store.data_dir), self._spawn, self._tool_servers, self
        )
        # Beside the servers' page: which calls ask the person, and the tools that never do.
        self.approvalSettings = ApprovalSettings(self)
        for page in (
            self.providersPage,
            self.firstRunPage,
            self.appearancePage,
            self.toolsPage,
            self.approvalSettings,
        ):
            self.tabs.addTab(page, "")

        self.saveError = QLabel(self)
        self.saveError.setObjectName("errorBanner")
        self.saveError.setWordWrap(True)
        self.saveError.setVisible(False)
        outer.addWidget(self.saveError)

        self.moveAsideButton = QPushButton(self)
        self.moveAsideButton.setObjectName("moveAsideButton")
        self.moveAsideButton.setVisible(False)
        self.moveAsideButton.clicked.connect(self._on_move_aside)
        outer.addWidget(self.moveAsideButton, 0, Qt.AlignmentFlag.AlignLeft)

        self.buttonBox = button_row(
            self,
            {Standard.Save: "saveButton", Standard.Apply: "applyButton", Standard.Cancel: ""},
            accepted=self._on_save_clicked,
            name="buttonBox",
        )
        self.saveButton = self.buttonBox.button(Standard.Save)
        self.applyButton = self.buttonBox.button(Standard.Apply)
        for button in (self.saveButton, self.applyButton):
            button.setEnabled(False)  # until the settings are loaded
        self.applyButton.clicked.connect(self._on_apply_clicked)
        outer.addWidget(self.buttonBox)

    def _build_first_run_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("firstRunPage")
        layout = QVBoxLayout(page)
        self._intro = QLabel(page)
        self._intro.setWordWrap(True)
        layout.addWidget(self._intro)
        self.discoveryStatus = QLabel(page)
        self.discoveryStatus.setObjectName("discoveryStatus")
        self.discoveryStatus.setWordWrap(True)
        layout.addWidget(self.discoveryStatus)

        scroll = QScrollArea(page)
        scroll.setWidgetResizable(True)
        self.foundList = QWidget(scroll)
        self.foundList.setObjectName("foundList")
        self._found_layout = QVBoxLayout(self.foundList)
        self._found_layout.addStretch(1)
        scroll.setWidget(self.foundList)
        layout.addWidget(scroll, 1)

        self.probeAgainButton = QPushButton(page)
        self.probeAgainButton.setObjectName("probeAgainButton")
        self.probeAgainButton.setEnabled(False)
        self.probeAgainButton.clicked.connect(lambda: self._spawn(self._discover()))
        self.addByHandButton = QPushButton(page)
        self.addByHandButton.setObjectName("addByHandButton")
        self.addByHandButton.clicked.connect(self._on_add_by_hand)
        buttons = QHBoxLayout()
        buttons.addWidget(self.probeAgainButton)
        buttons.addWidget(self.addByHandButton)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        return page

    def _build_appearance_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("appearancePage")
        form = QFormLayout(page)
        self.languageCombo = QComboBox(page)
        self.languageCombo.setObjectName("languageCombo")
        # Each language is named in itself, so a person who cannot read the current one
        # still finds their own; only "System" is translated (in `retranslate`).
        self.languageCombo.addItem("", "system")
        self.languageCombo.addItem("English", "en")
        self.languageCombo.addItem("简体中文", "zh_CN")
        self.themeCombo = QComboBox(page)
        self.themeCombo.setObjectName("themeCombo")
        for theme in ("system", "light", "dark"):
            self.themeCombo.addItem("", theme)
        self._language_label = QLabel(page)
        self._language_label.setBuddy(self.languageCombo)
        self._theme_label = QLabel(page)
        self._theme_label.setBuddy(self.themeCombo)
        form.addRow(self._language_label, self.languageCombo)
        form.addRow(self._theme_label, self.themeCombo)
        return page

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set every string the dialog owns in the current language (the pages set theirs)."""
        self.setWindowTitle(self.tr("Settings"))
        self.setAccessibleName(self.tr("Settings"))
        self.keychainWarning.setText(
            self.tr(
                "No system keychain was found, so API keys are saved in {path}, a file only "
                "your user account can read. Anyone with access to your account can read them."
            ).format(path=str(self._store.path))
        )
        self.tabs.setTabText(0, self.tr("Providers"))
        self.tabs.setTabText(1, self.tr("Found on this computer"))
        self.tabs.setTabText(2, self.tr("Language and look"))
        self.tabs.setTabText(3, self.tr("Tools"))
        self.tabs.setTabText(4, self.tr("Tool approval"))
        self.saveError.setAccessibleName(self.tr("Error"))
        self.moveAsideButton.setText(self.tr("Move the damaged settings file aside and save"))
        self._intro.setText(
            self.tr(
                "Continuo looked for model servers running on this computer and for API "
                "keys set in your environment. Add any of them with one click, or add a "
                "provider by hand on the Providers page."
            )
        )
        self._show_discovery_status()
        self.probeAgainButton.setText(self.tr("Look again"))
        self.addByHandButton.setText(self.tr("Add a provider by hand"))
        self._language_label.setText(self.tr("Language"))
        self._theme_label.setText(self.tr("Theme"))
        self.languageCombo.setItemText(0, self.tr("System"))
        self.languageCombo.setAccessibleName(self.tr("Language"))
        for index, text in enumerate((self.tr("System"), self.tr("Light"), self.tr("Dark"))):
            self.themeCombo.setItemText(index, text)
        self.themeCombo.setAccessibleName(self.tr("Theme"))

    def _show_discovery_status(self) -> None:
        if self._found is None:
            text = self.tr("Looking for model servers…")
        elif self._found:
            text = self.tr("Found {count}:").format(count=len(self._found))
        else:
            text = self.tr(
                "Nothing found. Start Ollama, LM Studio, llama.cpp or vLLM and press "
                "Look again, or add a provider by hand on the Providers page."
            )
        self.discoveryStatus.setText(text)

    # ------------------------------------------------------------------ tasks

    def _spawn(self, coro: Coroutine[Any, Any, Any], *, keep: bool = False) -> asyncio.Task[Any]:
        """Run ``coro`` as a task the dialog owns; ``keep`` ones survive closing (saves)."""
        return self._tasks.spawn(coro, "settings", keep=keep)

    async def wait_idle(self) -> None:
        """Wait until every task the dialog started has finished (the window's shutdown)."""
        await self._tasks.wait_idle()

    def _task_failed(self, exc: BaseException) -> None:
        # a bug, not a provider failure (those are caught; OwnedTasks logged it): show it
        if self._alive():
            self._show_save_error(describe_error(exc, engine_language())[0])

    def _alive(self) -> bool:
        """False once Qt has deleted the dialog (``deleteLater`` after closing)."""
        return shiboken6.isValid(self)

    def _cancel_background(self) -> None:
        """On close, stop probes and tests; a save in progress is left to finish."""
        self._tasks.cancel()

    # ------------------------------------------------------------------ loading

    def _show_keychain_warning(self) -> None:
        """Without a keychain, say where API keys are kept; not on the Tools page, whose own
        warning says where the servers' secret values are (one warning per page)."""
        tools = getattr(self, "toolsPage", None)
        on_tools = tools is not None and self.tabs.currentWidget() is tools
        self.keychainWarning.setVisible(
            self._keychain_known and not self._store.keychain_available and not on_tools
        )

    async def _load(self) -> None:
        try:
            self._settings = await self._store.load()
        except SettingsFileError as exc:
            self._settings = Settings()
            self._show_save_error(str(exc), offer_move=True)
        if not self._alive():
            return
        self._keychain_known = True
        self._show_keychain_warning()
        has_key: dict[str, bool] = {}
        for config in self._settings.providers:
            try:
                has_key[config.id] = bool(await self._store.get_api_key(config.id))
            except SettingsError as exc:
                has_key[config.id] = False
                if self._alive():
                    self._show_save_error(str(exc))
        if not self._alive():
            return
        self._set_combo(self.languageCombo, self._settings.language)
        self._set_combo(self.themeCombo, self._settings.theme)
        self.approvalSettings.load(self._settings.tool_approval, self._settings.always_allowed)
        self.providersPage.load(
            self._settings.providers, self._settings.default_provider_id, has_key
        )
        await self.toolsPage.load()
        if not self._alive():
            return
        if not self._settings.providers:
            self.tabs.setCurrentWidget(self.firstRunPage)
        self.saveButton.setEnabled(True)
        self.applyButton.setEnabled(True)
        self.is_loaded = True
        self.loaded.emit()

    async def _discover(self) -> None:
        self.probeAgainButton.setEnabled(False)
        self._found = None
        self._show_discovery_status()
        found = await discover(self._servers, environ=self._environ)
        if not self._alive():
            return
        self._found = found
        while self._found_layout.count() > 1:  # keep the trailing stretch
            item = self._found_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        providers = self.providersPage.providers
        for one in found:
            already = any(
                p.kind == one.config.kind and p.base_url == one.config.base_url for p in providers
            )
            row = _FoundRow(one, already, self.foundList)
            row.button.clicked.connect(lambda _=False, row=row: self._on_add_found(row))
            self._found_layout.insertWidget(self._found_layout.count() - 1, row)
        self._show_discovery_status()
        self.probeAgainButton.setEnabled(True)
        self.discoveryFinished.emit()

    # ------------------------------------------------------------------ saving

    def _on_add_by_hand(self) -> None:
        self.providersPage.add_provider()
        self.tabs.setCurrentWidget(self.providersPage)

    def _on_save_clicked(self) -> None:
        if self.is_saving:
            return
        self.providersPage.commit_form()
        self._spawn(self._save(self._snapshot(), close=True), keep=True)

    def _on_apply_clicked(self) -> None:
        if self.is_saving:
            return
        self.providersPage.commit_form()
        self._spawn(self._save(self._snapshot(), close=False), keep=True)

    def _on_move_aside(self) -> None:
        self.providersPage.commit_form()
        snapshot = self._snapshot()
        self.moveAsideButton.setVisible(False)

        async def move_then_save() -> None:
            moved = await self._store.move_aside()
            log.info("Settings file moved aside to %s", moved)
            await self._save(snapshot, close=False)

        self._spawn(move_then_save(), keep=True)

    def _on_add_found(self, row: _FoundRow) -> None:
        found = row.found
        row.button.setEnabled(False)
        self.providersPage.add_found(
            found.config, found.api_key.reveal() if found.api_key is not None else None
        )
        snapshot = self._snapshot()

        async def add() -> None:
            done = await self._save(snapshot, close=False)
            if not shiboken6.isValid(row):
                return
            if done:
                row.mark_added()
            else:
                row.button.setEnabled(True)

        self._spawn(add(), keep=True)

    def _snapshot(self) -> _SaveRequest:
        """Take everything a save needs from the widgets now, while they surely exist."""
        page = self.providersPage
        return _SaveRequest(
            providers=list(page.providers),
            keys=dict(page.pending_keys),
            removed=set(page.removed),
            default_provider_id=page.default_provider_id,
            language=self.languageCombo.currentData(),
            theme=self.themeCombo.currentData(),
            tools=self.toolsPage.snapshot(),
            tool_approval=self.approvalSettings.policy(),
            revoked_tools=self.approvalSettings.revoked(),
        )

    async def _save(self, request: _SaveRequest, *, close: bool) -> bool:
        """Write keys, then settings; emit ``settingsChanged``. Return True on success.

        Runs on even if the dialog is closed and deleted meanwhile (the window deletes it
        once closed): it reads only ``request`` and touches widgets only while they exist.
        """
        self.is_saving = True
        page = self.providersPage
        if self._alive():
            self.saveButton.setEnabled(False)
            self.applyButton.setEnabled(False)
            self.saveError.setVisible(False)
        providers = request.providers
        try:
            if request.tools is not None:
                await self.toolsPage.save(request.tools)
            for provider_id in request.removed:
                await self._store.delete_api_key(provider_id)
                page.removed.discard(provider_id)
            for provider_id, key in request.keys.items():
                index = next((i for i, p in enumerate(providers) if p.id == provider_id), -1)
                if index < 0:
                    continue
                in_keychain = await self._store.set_api_key(provider_id, key)
                providers[index] = replace(
                    providers[index], key_in_keychain=in_keychain and bool(key)
                )
                page.key_saved(provider_id, key)
            # What the dialog does not edit (the last conversation, the window geometry) may
            # have been saved by the window since the dialog opened: take it from the file.
            current = await self._store.load()
            current.providers = providers
            current.default_provider_id = request.default_provider_id
            default = current.default_provider()  # the chosen one, else the first
            current.default_provider_id = default.id if default else None
            current.language = request.language
            current.theme = request.theme
            current.tool_approval = request.tool_approval
            # A tool allowed meanwhile (on a card) stays; only what was revoked goes.
            current.always_allowed = [
                pair for pair in current.always_allowed if pair not in request.revoked_tools
            ]
            await self._store.save(current)
        except SettingsError as exc:
            if self._alive():
                self._show_save_error(str(exc), offer_move=isinstance(exc, SettingsFileError))
            return False
        finally:
            self.is_saving = False
            if self._alive():
                self.saveButton.setEnabled(True)
                self.applyButton.setEnabled(True)
        self._settings.language, self._settings.theme = current.language, current.theme
        self._settings.default_provider_id = current.default_provider_id
        app = QApplication.instance()
        if isinstance(app, QApplication):
            if app.property("continuoTheme") != current.theme:
                apply_palette(app, current.theme)
            if installed_language() != current.language:
                # Every widget gets QEvent.LanguageChange and sets its strings again.
                install_translator(app, current.language)
        page.after_save({p.id: p.key_in_keychain for p in providers}, current.default_provider_id)
        if not self._alive():  # closed and deleted while saving: the files are written
            return True
        self.saved.emit()
        self.settingsChanged.emit()
        if close:
            self.accept()
        return True

    def _show_save_error(self, message: str, *, offer_move: bool = False) -> None:
        self.saveError.setText(message)
        self.saveError.setVisible(True)
        self.moveAsideButton.setVisible(offer_move)

    # ------------------------------------------------------------------ helpers

    @property
    def settings(self) -> Settings:
        """The settings as last loaded or saved."""
        return self._settings

    @staticmethod
    def _set_combo(combo: QComboBox, value: str) -> None:
        index = combo.findData(value)
        combo.setCurrentIndex(max(index, 0))

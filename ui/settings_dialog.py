"""The settings dialog: providers and their keys, what was found on this computer, language, look.

Owns `SettingsDialog` (objectName ``settingsDialog``). It is opened with ``open()`` — never a
nested ``exec()``, which would re-enter the qasync loop — and does all its waiting in tasks
it owns: loading settings, looking for local servers, testing a connection, saving. It emits
``settingsChanged`` after every successful save.

Three pages:

- **Providers**: add, edit and remove OpenAI-compatible, Anthropic and Ollama endpoints (name,
  base URL, API key, default model), make one the default, and "Test connection", which lists
  the server's models through the engine's adapter and puts any failure in plain words. The
  key field never shows a saved key; left empty it keeps it. Without an OS keychain a visible
  warning says keys are kept in a file only this user can read.
- **Found on this computer** (the first-run page): local model servers that answered and API
  keys set in the environment, each added with one click (which saves at once).
- **Language and look**: System / English / 简体中文 (applies at the next start: widgets
  build their text once) and System / Light / Dark (applies at once).

Signals for tests and the window: ``loaded`` (settings read), ``discoveryFinished``,
``connectionTested(ok, message)``, ``saved``, ``settingsChanged``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx
import shiboken6
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.errors import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderTimeoutError,
)

from .first_run import DEFAULT_SERVERS, Discovery, LocalServer, discover
from .settings import (
    DEFAULT_BASE_URLS,
    KINDS,
    ProviderConfig,
    Settings,
    SettingsError,
    SettingsFileError,
    SettingsStore,
    new_provider_id,
)
from .theme import apply_palette

__all__ = ["SettingsDialog", "describe_error"]

log = logging.getLogger(__name__)

#: Seconds a connection test may take; one attempt, so a wrong address fails promptly.
TEST_TIMEOUT = 15.0


def _kind_label(kind: str) -> str:
    return {
        "openai": QCoreApplication.translate("SettingsDialog", "OpenAI-compatible"),
        "anthropic": QCoreApplication.translate("SettingsDialog", "Anthropic"),
        "ollama": QCoreApplication.translate("SettingsDialog", "Ollama"),
    }[kind]


def describe_error(exc: BaseException, base_url: str = "", secret: str | None = None) -> str:
    """Return one or two sentences a person understands for a failed connection test.

    The key, if given, is blanked out of the result in case a server echoed it back.
    """
    detail = str(exc).strip()
    where = base_url or QCoreApplication.translate("SettingsDialog", "the server")
    if isinstance(exc, ProviderAuthError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server refused the API key (HTTP {status}). Check that the key is "
            "correct and still active, then test again.",
        ).format(status=exc.status)
    elif isinstance(exc, ProviderRateLimitError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server says too many requests were made. Wait a minute and test again.",
        )
    elif isinstance(exc, ProviderStatusError):
        text = QCoreApplication.translate(
            "SettingsDialog", "The server answered with an error (HTTP {status}): {detail}"
        ).format(status=exc.status, detail=detail)
    elif isinstance(exc, ProviderTimeoutError | httpx.TimeoutException):
        text = QCoreApplication.translate(
            "SettingsDialog", "{url} did not answer in time. Check the address, or try again later."
        ).format(url=where)
    elif isinstance(exc, ProviderConnectionError | httpx.TransportError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "Could not connect to {url}. Check the address and that the server is running.",
        ).format(url=where)
    elif isinstance(exc, ProviderResponseError):
        text = QCoreApplication.translate(
            "SettingsDialog",
            "The server's answer was not understood ({detail}). Check that the address "
            "points to this kind of server.",
        ).format(detail=detail)
    elif isinstance(exc, ProviderError | SettingsError):
        text = detail
    else:
        text = QCoreApplication.translate(
            "SettingsDialog", "The connection test failed: {detail}"
        ).format(detail=f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)
    return text.replace(secret, "***") if secret else text


@dataclass(slots=True)
class _SaveRequest:
    """What one save writes, taken from the widgets when the person asked for it."""

    providers: list[ProviderConfig]
    keys: dict[str, str]  #: provider id → key to store ("" = forget)
    removed: set[str]
    default_provider_id: str | None
    language: str
    theme: str

    def __repr__(self) -> str:  # holds keys: never show them
        return f"_SaveRequest({len(self.providers)} providers, {len(self.keys)} keys)"


def _model_names(models: Sequence[Any]) -> list[str]:
    """Return model ids whatever shape the adapter lists them in (str or objects)."""
    names = []
    for item in models:
        if isinstance(item, str):
            names.append(item)
        else:
            name = getattr(item, "id", None) or getattr(item, "name", None)
            if name:
                names.append(str(name))
    return names


class SettingsDialog(QDialog):
    """Edit providers, keys, language and theme. Open with ``open()``.

    Args:
        store: where settings and keys are kept.
        parent: the window; the dialog is modal to it.
        servers: the local servers the first-run page looks for (tests inject ports).
        environ: the environment to read API keys from (default ``os.environ``).
        first_run: open on the "Found on this computer" page.
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
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle(self.tr("Settings"))
        self.setModal(True)
        self.resize(760, 520)

        self._store = store
        self._servers = tuple(servers)
        self._environ = environ
        self._settings = Settings()
        self._providers: list[ProviderConfig] = []
        self._pending_keys: dict[str, str] = {}  #: provider id → new key ("" = forget)
        self._has_key: dict[str, bool] = {}
        self._removed: set[str] = set()
        self._current: str | None = None  #: id of the provider in the form
        self._found: list[Discovery] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._kept: set[asyncio.Task[Any]] = set()  #: saves: finish even if the dialog closes
        self._loading_form = False
        self.is_loaded = False
        self.is_saving = False

        self._build()
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
        self.keychainWarning.setText(
            self.tr(
                "No system keychain was found, so API keys are saved in {path}, a file only "
                "your user account can read. Anyone with access to your account can read them."
            ).format(path=str(self._store.path))
        )
        self.keychainWarning.setVisible(False)
        outer.addWidget(self.keychainWarning)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("settingsTabs")
        outer.addWidget(self.tabs, 1)
        self.providersPage = self._build_providers_page()
        self.firstRunPage = self._build_first_run_page()
        self.appearancePage = self._build_appearance_page()
        self.tabs.addTab(self.providersPage, self.tr("Providers"))
        self.tabs.addTab(self.firstRunPage, self.tr("Found on this computer"))
        self.tabs.addTab(self.appearancePage, self.tr("Language and look"))

        self.saveError = QLabel(self)
        self.saveError.setObjectName("errorBanner")
        self.saveError.setWordWrap(True)
        self.saveError.setVisible(False)
        outer.addWidget(self.saveError)

        self.moveAsideButton = QPushButton(
            self.tr("Move the damaged settings file aside and save"), self
        )
        self.moveAsideButton.setObjectName("moveAsideButton")
        self.moveAsideButton.setVisible(False)
        self.moveAsideButton.clicked.connect(self._on_move_aside)
        outer.addWidget(self.moveAsideButton, 0, Qt.AlignmentFlag.AlignLeft)

        self.buttonBox = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttonBox.setObjectName("buttonBox")
        self.saveButton = self.buttonBox.button(QDialogButtonBox.StandardButton.Save)
        self.saveButton.setObjectName("saveButton")
        self.saveButton.setEnabled(False)  # until the settings are loaded
        self.buttonBox.accepted.connect(self._on_save_clicked)
        self.buttonBox.rejected.connect(self.reject)
        outer.addWidget(self.buttonBox)

    def _build_providers_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("providersPage")
        row = QHBoxLayout(page)

        left = QVBoxLayout()
        self.providerList = QListWidget(page)
        self.providerList.setObjectName("providerList")
        self.providerList.currentItemChanged.connect(self._on_provider_selected)
        left.addWidget(self.providerList, 1)
        buttons = QHBoxLayout()
        self.addProviderButton = QPushButton(self.tr("Add"), page)
        self.addProviderButton.setObjectName("addProviderButton")
        self.addProviderButton.clicked.connect(self._on_add_provider)
        self.removeProviderButton = QPushButton(self.tr("Remove"), page)
        self.removeProviderButton.setObjectName("removeProviderButton")
        self.removeProviderButton.clicked.connect(self._on_remove_provider)
        buttons.addWidget(self.addProviderButton)
        buttons.addWidget(self.removeProviderButton)
        left.addLayout(buttons)
        row.addLayout(left, 2)

        self.providerForm = QWidget(page)
        self.providerForm.setObjectName("providerForm")
        form = QFormLayout(self.providerForm)
        self.providerKind = QComboBox(self.providerForm)
        self.providerKind.setObjectName("providerKind")
        for kind in KINDS:
            self.providerKind.addItem(_kind_label(kind), kind)
        self.providerKind.currentIndexChanged.connect(self._on_kind_changed)
        self.providerName = QLineEdit(self.providerForm)
        self.providerName.setObjectName("providerName")
        self.providerName.textEdited.connect(self._on_name_edited)
        self.providerBaseUrl = QLineEdit(self.providerForm)
        self.providerBaseUrl.setObjectName("providerBaseUrl")
        self.providerApiKey = QLineEdit(self.providerForm)
        self.providerApiKey.setObjectName("providerApiKey")
        self.providerApiKey.setEchoMode(QLineEdit.EchoMode.Password)
        self.forgetKeyButton = QPushButton(self.tr("Forget key"), self.providerForm)
        self.forgetKeyButton.setObjectName("forgetKeyButton")
        self.forgetKeyButton.clicked.connect(self._on_forget_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.providerApiKey, 1)
        key_row.addWidget(self.forgetKeyButton)
        self.providerModel = QComboBox(self.providerForm)
        self.providerModel.setObjectName("providerModel")
        self.providerModel.setEditable(True)
        self.providerModel.lineEdit().setPlaceholderText(self.tr("Ask the server"))
        self.providerDefault = QCheckBox(self.tr("Use for new conversations"), self.providerForm)
        self.providerDefault.setObjectName("providerDefault")
        self.testConnectionButton = QPushButton(self.tr("Test connection"), self.providerForm)
        self.testConnectionButton.setObjectName("testConnectionButton")
        self.testConnectionButton.clicked.connect(self._on_test_connection)
        self.connectionResult = QLabel(self.providerForm)
        self.connectionResult.setObjectName("connectionResult")
        self.connectionResult.setWordWrap(True)
        self.connectionResult.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        form.addRow(self.tr("Kind"), self.providerKind)
        form.addRow(self.tr("Name"), self.providerName)
        form.addRow(self.tr("Base URL"), self.providerBaseUrl)
        form.addRow(self.tr("API key"), key_row)
        form.addRow(self.tr("Default model"), self.providerModel)
        form.addRow("", self.providerDefault)
        form.addRow("", self.testConnectionButton)
        form.addRow("", self.connectionResult)
        row.addWidget(self.providerForm, 3)
        self.providerForm.setEnabled(False)
        self.removeProviderButton.setEnabled(False)
        return page

    def _build_first_run_page(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("firstRunPage")
        layout = QVBoxLayout(page)
        intro = QLabel(
            self.tr(
                "Continuo looked for model servers running on this computer and for API "
                "keys set in your environment. Add any of them with one click, or add a "
                "provider by hand on the Providers page."
            ),
            page,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.discoveryStatus = QLabel(self.tr("Looking for model servers…"), page)
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

        self.probeAgainButton = QPushButton(self.tr("Look again"), page)
        self.probeAgainButton.setObjectName("probeAgainButton")
        self.probeAgainButton.setEnabled(False)
        self.probeAgainButton.clicked.connect(lambda: self._spawn(self._discover()))
        self.addByHandButton = QPushButton(self.tr("Add a provider by hand"), page)
        self.addByHandButton.setObjectName("addByHandButton")
        self.addByHandButton.clicked.connect(self._on_add_provider)
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
        self.languageCombo.addItem(self.tr("System"), "system")
        # Each language is named in itself, so a person who cannot read the current one
        # still finds their own.
        self.languageCombo.addItem("English", "en")
        self.languageCombo.addItem("简体中文", "zh_CN")
        self.themeCombo = QComboBox(page)
        self.themeCombo.setObjectName("themeCombo")
        self.themeCombo.addItem(self.tr("System"), "system")
        self.themeCombo.addItem(self.tr("Light"), "light")
        self.themeCombo.addItem(self.tr("Dark"), "dark")
        note = QLabel(self.tr("A new language takes effect the next time Continuo starts."), page)
        note.setObjectName("languageNote")
        note.setWordWrap(True)
        form.addRow(self.tr("Language"), self.languageCombo)
        form.addRow("", note)
        form.addRow(self.tr("Theme"), self.themeCombo)
        return page

    # ------------------------------------------------------------------ tasks

    def _spawn(self, coro: Coroutine[Any, Any, Any], *, keep: bool = False) -> asyncio.Task[Any]:
        """Run ``coro`` as a task the dialog owns; ``keep`` ones survive closing (saves)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        if keep:
            self._kept.add(task)
        task.add_done_callback(self._task_done)
        return task

    async def wait_idle(self) -> None:
        """Wait until every task the dialog started has finished (the window's shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        self._kept.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:  # a bug, not a provider failure (those are caught): show it
            log.error("Settings dialog task failed", exc_info=exc)
            if self._alive():
                self._show_save_error(describe_error(exc))

    def _alive(self) -> bool:
        """False once Qt has deleted the dialog (``deleteLater`` after closing)."""
        return shiboken6.isValid(self)

    def _cancel_background(self) -> None:
        """On close, stop probes and tests; a save in progress is left to finish."""
        for task in self._tasks - self._kept:
            task.cancel()

    # ------------------------------------------------------------------ loading

    async def _load(self) -> None:
        try:
            self._settings = await self._store.load()
        except SettingsFileError as exc:
            self._settings = Settings()
            self._show_save_error(str(exc), offer_move=True)
        if not self._alive():
            return
        self.keychainWarning.setVisible(not self._store.keychain_available)
        self._providers = list(self._settings.providers)
        for config in self._providers:
            try:
                self._has_key[config.id] = bool(await self._store.get_api_key(config.id))
            except SettingsError as exc:
                self._has_key[config.id] = False
                if self._alive():
                    self._show_save_error(str(exc))
        if not self._alive():
            return
        self._set_combo(self.languageCombo, self._settings.language)
        self._set_combo(self.themeCombo, self._settings.theme)
        self._refresh_list(select=self._settings.default_provider_id)
        if not self._providers:
            self.tabs.setCurrentWidget(self.firstRunPage)
        self.saveButton.setEnabled(True)
        self.is_loaded = True
        self.loaded.emit()

    async def _discover(self) -> None:
        self.probeAgainButton.setEnabled(False)
        self.discoveryStatus.setText(self.tr("Looking for model servers…"))
        self._found = await discover(self._servers, environ=self._environ)
        if not self._alive():
            return
        while self._found_layout.count() > 1:  # keep the trailing stretch
            item = self._found_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for found in self._found:
            self._found_layout.insertWidget(self._found_layout.count() - 1, self._found_row(found))
        if self._found:
            self.discoveryStatus.setText(self.tr("Found {count}:").format(count=len(self._found)))
        else:
            self.discoveryStatus.setText(
                self.tr(
                    "Nothing found. Start Ollama, LM Studio, llama.cpp or vLLM and press "
                    "Look again, or add a provider by hand on the Providers page."
                )
            )
        self.probeAgainButton.setEnabled(True)
        self.discoveryFinished.emit()

    def _found_row(self, found: Discovery) -> QWidget:
        row = QWidget(self.foundList)
        row.setObjectName("foundRow")
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 4, 0, 4)
        if found.api_key is not None:
            detail = self.tr("API key from {variable}").format(variable=found.source)
        else:
            detail = self.tr("running at {address}, {count} model(s)").format(
                address=found.source, count=len(found.models)
            )
        label = QLabel(f"<b>{html.escape(found.config.name)}</b> — {html.escape(detail)}", row)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        layout.addWidget(label, 1)
        button = QPushButton(self.tr("Add"), row)
        button.setObjectName("addFoundButton")
        button.setProperty("source", found.source)
        already = any(
            p.kind == found.config.kind and p.base_url == found.config.base_url
            for p in self._providers
        )
        if already and found.api_key is None:
            button.setText(self.tr("Added"))
            button.setEnabled(False)
        button.clicked.connect(lambda: self._on_add_found(found, button))
        layout.addWidget(button)
        return row

    # ------------------------------------------------------------------ the list

    def _refresh_list(self, select: str | None = None) -> None:
        self._loading_form = True
        self.providerList.clear()
        default_id = self._default_id()
        for config in self._providers:
            text = config.name
            if config.id == default_id:
                text = self.tr("{name} (default)").format(name=config.name)
            item = QListWidgetItem(text, self.providerList)
            item.setData(Qt.ItemDataRole.UserRole, config.id)
        self._loading_form = False
        target = select if any(p.id == select for p in self._providers) else None
        if target is None and self._providers:
            target = self._providers[0].id
        for row in range(self.providerList.count()):
            if self.providerList.item(row).data(Qt.ItemDataRole.UserRole) == target:
                self.providerList.setCurrentRow(row)
                break
        else:
            self._show_form(None)

    def _default_id(self) -> str | None:
        default = self._settings.default_provider_id
        if any(p.id == default for p in self._providers):
            return default
        return self._providers[0].id if self._providers else None

    def _index(self, provider_id: str | None) -> int:
        return next((i for i, p in enumerate(self._providers) if p.id == provider_id), -1)

    def _on_provider_selected(self, current: QListWidgetItem | None, _previous: Any) -> None:
        if self._loading_form:
            return
        self._commit_form()
        self._show_form(current.data(Qt.ItemDataRole.UserRole) if current else None)

    def _show_form(self, provider_id: str | None) -> None:
        self._loading_form = True
        try:
            self._current = provider_id
            index = self._index(provider_id)
            self.providerForm.setEnabled(index >= 0)
            self.removeProviderButton.setEnabled(index >= 0)
            self.connectionResult.clear()
            self.providerApiKey.clear()
            if index < 0:
                self.providerName.clear()
                self.providerBaseUrl.clear()
                self.providerModel.clear()
                return
            config = self._providers[index]
            self.providerKind.setCurrentIndex(KINDS.index(config.kind))
            self.providerName.setText(config.name)
            self.providerBaseUrl.setText(config.base_url)
            self.providerModel.clear()
            self.providerModel.setEditText(config.default_model)
            self.providerDefault.setChecked(config.id == self._default_id())
            self._update_key_placeholder()
        finally:
            self._loading_form = False

    def _update_key_placeholder(self) -> None:
        provider_id = self._current or ""
        pending = self._pending_keys.get(provider_id)
        if pending == "":
            text = self.tr("The saved key will be forgotten")
        elif pending or self._has_key.get(provider_id):
            text = self.tr("A key is saved; leave empty to keep it")
        else:
            text = self.tr("Not set (local servers need none)")
        self.providerApiKey.setPlaceholderText(text)
        self.forgetKeyButton.setEnabled(
            bool(pending) or (pending is None and bool(self._has_key.get(provider_id)))
        )

    def _commit_form(self) -> None:
        """Copy the form into the working list (and the typed key into pending keys)."""
        index = self._index(self._current)
        if index < 0:
            return
        old = self._providers[index]
        kind = self.providerKind.currentData() or old.kind
        name = self.providerName.text().strip() or _kind_label(kind)
        base_url = self.providerBaseUrl.text().strip() or DEFAULT_BASE_URLS[kind]
        self._providers[index] = replace(
            old,
            kind=kind,
            name=name,
            base_url=base_url,
            default_model=self.providerModel.currentText().strip(),
        )
        key = self.providerApiKey.text().strip()
        if key:
            self._pending_keys[old.id] = key
        if self.providerDefault.isChecked():
            self._settings.default_provider_id = old.id
        elif self._settings.default_provider_id == old.id:
            self._settings.default_provider_id = None

    def _on_kind_changed(self, _index: int) -> None:
        if self._loading_form:
            return
        kind = self.providerKind.currentData()
        current_url = self.providerBaseUrl.text().strip()
        # A URL the person typed is theirs; only a default (or nothing) follows the kind.
        if not current_url or current_url in DEFAULT_BASE_URLS.values():
            self.providerBaseUrl.setText(DEFAULT_BASE_URLS[kind])
        current_name = self.providerName.text().strip()
        if not current_name or current_name in (_kind_label(k) for k in KINDS):
            self.providerName.setText(_kind_label(kind))

    def _on_name_edited(self, text: str) -> None:
        item = self.providerList.currentItem()
        if item is not None and text.strip():
            item.setText(text.strip())

    def _on_add_provider(self) -> None:
        self._commit_form()
        config = ProviderConfig(
            id=new_provider_id(),
            kind="openai",
            name=_kind_label("openai"),
            base_url=DEFAULT_BASE_URLS["openai"],
        )
        self._providers.append(config)
        self._refresh_list(select=config.id)
        self.tabs.setCurrentWidget(self.providersPage)
        self.providerName.setFocus()
        self.providerName.selectAll()

    def _on_remove_provider(self) -> None:
        index = self._index(self._current)
        if index < 0:
            return
        removed = self._providers.pop(index)
        self._removed.add(removed.id)
        self._pending_keys.pop(removed.id, None)
        if self._settings.default_provider_id == removed.id:
            self._settings.default_provider_id = None
        self._current = None
        self._refresh_list()

    def _on_forget_key(self) -> None:
        if self._current is None:
            return
        self.providerApiKey.clear()
        self._pending_keys[self._current] = ""
        self._update_key_placeholder()

    # ------------------------------------------------------------------ testing

    def _on_test_connection(self) -> None:
        self._commit_form()
        index = self._index(self._current)
        if index < 0:
            return
        self.testConnectionButton.setEnabled(False)
        self.connectionResult.setText(self.tr("Connecting…"))
        self._spawn(self._test_connection(self._providers[index]))

    async def _test_connection(self, config: ProviderConfig) -> None:
        key = self._pending_keys.get(config.id) or None
        model = None
        try:
            model = await self._store.build_model(
                config, api_key=key, timeout=TEST_TIMEOUT, max_attempts=1
            )
            names = _model_names(await model.list_models())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = describe_error(exc, config.base_url, secret=key)
            log.info("Connection test for %s failed: %s", config.name, message)
            self._finish_test(config.id, False, message)
            return
        finally:
            if model is not None:
                with contextlib.suppress(Exception):
                    await model.aclose()
        if names:
            shown = ", ".join(names[:8]) + ("…" if len(names) > 8 else "")
            message = self.tr("Connected. {count} model(s): {names}").format(
                count=len(names), names=shown
            )
        else:
            message = self.tr("Connected, but the server lists no models.")
        self._finish_test(config.id, True, message, names)

    def _finish_test(
        self, provider_id: str, ok: bool, message: str, names: Sequence[str] = ()
    ) -> None:
        if not self._alive():
            return
        self.testConnectionButton.setEnabled(True)
        if self._current == provider_id:
            self.connectionResult.setText(message)
            if names:
                typed = self.providerModel.currentText()
                self.providerModel.clear()
                self.providerModel.addItems(list(names))
                self.providerModel.setEditText(typed or names[0])
        self.connectionTested.emit(ok, message)

    # ------------------------------------------------------------------ saving

    def _on_save_clicked(self) -> None:
        if self.is_saving:
            return
        self._commit_form()
        self._spawn(self._save(self._snapshot(), close=True), keep=True)

    def _on_move_aside(self) -> None:
        self._commit_form()
        snapshot = self._snapshot()
        self.moveAsideButton.setVisible(False)

        async def move_then_save() -> None:
            moved = await self._store.move_aside()
            log.info("Settings file moved aside to %s", moved)
            await self._save(snapshot, close=False)

        self._spawn(move_then_save(), keep=True)

    def _on_add_found(self, found: Discovery, button: QPushButton) -> None:
        self._commit_form()
        button.setEnabled(False)
        self._providers.append(found.config)
        if found.api_key is not None:
            self._pending_keys[found.config.id] = found.api_key.reveal()
        self._refresh_list(select=found.config.id)
        snapshot = self._snapshot()

        async def add() -> None:
            done = await self._save(snapshot, close=False)
            if not shiboken6.isValid(button):
                return
            if done:
                button.setText(self.tr("Added"))
            else:
                button.setEnabled(True)

        self._spawn(add(), keep=True)

    def _snapshot(self) -> _SaveRequest:
        """Take everything a save needs from the widgets now, while they surely exist."""
        return _SaveRequest(
            providers=list(self._providers),
            keys=dict(self._pending_keys),
            removed=set(self._removed),
            default_provider_id=self._settings.default_provider_id,
            language=self.languageCombo.currentData(),
            theme=self.themeCombo.currentData(),
        )

    async def _save(self, request: _SaveRequest, *, close: bool) -> bool:
        """Write keys, then settings; emit ``settingsChanged``. Return True on success.

        Runs on even if the dialog is closed and deleted meanwhile (the window deletes it
        once closed): it reads only ``request`` and touches widgets only while they exist.
        """
        self.is_saving = True
        if self._alive():
            self.saveButton.setEnabled(False)
            self.saveError.setVisible(False)
        providers = request.providers
        try:
            for provider_id in request.removed:
                await self._store.delete_api_key(provider_id)
                self._removed.discard(provider_id)
            for provider_id, key in request.keys.items():
                index = next((i for i, p in enumerate(providers) if p.id == provider_id), -1)
                if index < 0:
                    continue
                in_keychain = await self._store.set_api_key(provider_id, key)
                providers[index] = replace(
                    providers[index], key_in_keychain=in_keychain and bool(key)
                )
                self._has_key[provider_id] = bool(key)
                if self._pending_keys.get(provider_id) == key:
                    del self._pending_keys[provider_id]
            # What the dialog does not edit (the last conversation, the window geometry) may
            # have been saved by the window since the dialog opened: take it from the file.
            current = await self._store.load()
            current.providers = providers
            current.default_provider_id = request.default_provider_id
            default = current.default_provider()  # the chosen one, else the first
            current.default_provider_id = default.id if default else None
            current.language = request.language
            current.theme = request.theme
            await self._store.save(current)
        except SettingsError as exc:
            if self._alive():
                self._show_save_error(str(exc), offer_move=isinstance(exc, SettingsFileError))
            return False
        finally:
            self.is_saving = False
            if self._alive():
                self.saveButton.setEnabled(True)
        # Keep key locations the save learned, and edits made while it ran.
        located = {p.id: p.key_in_keychain for p in providers}
        self._providers = [
            replace(p, key_in_keychain=located.get(p.id, p.key_in_keychain))
            for p in self._providers
        ]
        self._settings.language, self._settings.theme = current.language, current.theme
        self._settings.default_provider_id = current.default_provider_id
        app = QApplication.instance()
        if isinstance(app, QApplication) and app.property("continuoTheme") != current.theme:
            apply_palette(app, current.theme)
        if not self._alive():  # closed and deleted while saving: the files are written
            return True
        self.providerApiKey.clear()
        self._update_key_placeholder()
        self._refresh_list(select=self._current)
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

"""The settings dialog's Providers page: the list of endpoints, the form that edits one, and
"Test connection".

Owns the working copy the dialog saves: the providers as edited, the keys typed but not yet
stored (``pending_keys``, "" meaning "forget the saved key"), which providers have a stored
key, which were removed, and the chosen default. The dialog loads it (`load`), takes it for a
save (`commit_form` then the public fields) and tells it what the save learned (`key_saved`,
`after_save`). The key field never shows a saved key; left empty it keeps it.

"Test connection" lists the server's models through the engine's adapter, in a task the dialog
owns (it is cancelled when the dialog closes), and puts any failure in plain words
(`describe_error`).

Every visible string is set in `retranslate`, which runs once after the widgets are built and
again on each ``QEvent.LanguageChange``, so a new language shows at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..common.dialog_buttons import named_button
from ..common.errors import describe_error
from ..common.i18n import engine_language
from .store import (
    DEFAULT_BASE_URLS,
    KINDS,
    ProviderConfig,
    SettingsStore,
    new_provider_id,
)

__all__ = ["TEST_TIMEOUT", "ProviderPage", "kind_label"]

log = logging.getLogger(__name__)

# Seconds a connection test may take; one attempt, so a wrong address fails promptly.
TEST_TIMEOUT = 15.0

Spawn = Callable[[Coroutine[Any, Any, Any]], "asyncio.Task[Any]"]


def kind_label(kind: str) -> str:
    """The name shown for a provider kind ("openai" → "OpenAI-compatible")."""
    return {
        "openai": QCoreApplication.translate("SettingsDialog", "OpenAI-compatible"),
        "anthropic": QCoreApplication.translate("SettingsDialog", "Anthropic"),
        "ollama": QCoreApplication.translate("SettingsDialog", "Ollama"),
    }[kind]


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


class ProviderPage(QWidget):
    """The Providers page (objectName ``providersPage``); see the module docstring.

    Args:
        store: builds the adapter a connection test uses.
        spawn: runs a coroutine as a task the dialog owns.
        parent: the dialog.
    """

    # a connection test finished: (it worked, what to tell the person)
    connectionTested = Signal(bool, str)  # noqa: N815 (Qt naming)

    def __init__(self, store: SettingsStore, spawn: Spawn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("providersPage")
        self._store = store
        self._spawn = spawn
        self.providers: list[ProviderConfig] = []
        self.pending_keys: dict[str, str] = {}  # provider id → new key ("" = forget)
        self.has_key: dict[str, bool] = {}
        self.removed: set[str] = set()
        self.default_provider_id: str | None = None
        self._current: str | None = None  # id of the provider in the form
        self._loading_form = False
        self._build()
        self.retranslate()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        row = QHBoxLayout(self)

        left = QVBoxLayout()
        self.providerList = QListWidget(self)
        self.providerList.setObjectName("providerList")
        self.providerList.currentItemChanged.connect(self._on_provider_selected)
        left.addWidget(self.providerList, 1)
        buttons = QHBoxLayout()
        self.addProviderButton = named_button(self, "addProviderButton", self.add_provider)
        self.removeProviderButton = named_button(
            self, "removeProviderButton", self._on_remove_provider
        )
        buttons.addWidget(self.addProviderButton)
        buttons.addWidget(self.removeProviderButton)
        left.addLayout(buttons)
        row.addLayout(left, 2)

        self.providerForm = QWidget(self)
        self.providerForm.setObjectName("providerForm")
        form = QFormLayout(self.providerForm)
        self.providerKind = QComboBox(self.providerForm)
        self.providerKind.setObjectName("providerKind")
        for kind in KINDS:
            self.providerKind.addItem("", kind)
        self.providerKind.currentIndexChanged.connect(self._on_kind_changed)
        self.providerName = QLineEdit(self.providerForm)
        self.providerName.setObjectName("providerName")
        self.providerName.textEdited.connect(self._on_name_edited)
        self.providerBaseUrl = QLineEdit(self.providerForm)
        self.providerBaseUrl.setObjectName("providerBaseUrl")
        self.providerApiKey = QLineEdit(self.providerForm)
        self.providerApiKey.setObjectName("providerApiKey")
        self.providerApiKey.setEchoMode(QLineEdit.EchoMode.Password)
        self.forgetKeyButton = named_button(
            self.providerForm, "forgetKeyButton", self._on_forget_key
        )
        key_row = QHBoxLayout()
        key_row.addWidget(self.providerApiKey, 1)
        key_row.addWidget(self.forgetKeyButton)
        self.providerModel = QComboBox(self.providerForm)
        self.providerModel.setObjectName("providerModel")
        self.providerModel.setEditable(True)
        self.providerDefault = QCheckBox(self.providerForm)
        self.providerDefault.setObjectName("providerDefault")
        self.providerDefault.toggled.connect(self._relabel)
        self.testConnectionButton = named_button(
            self.providerForm, "testConnectionButton", self._on_test_connection
        )
        self.connectionResult = QLabel(self.providerForm)
        self.connectionResult.setObjectName("connectionResult")
        self.connectionResult.setTextFormat(Qt.TextFormat.PlainText)  # the server's model names
        self.connectionResult.setWordWrap(True)
        self.connectionResult.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._labels: dict[str, QLabel] = {}
        for key, field in (
            ("kind", self.providerKind),
            ("name", self.providerName),
            ("url", self.providerBaseUrl),
            ("key", key_row),
            ("model", self.providerModel),
        ):
            label = QLabel(self.providerForm)
            if isinstance(field, QWidget):
                label.setBuddy(field)
            self._labels[key] = label
            form.addRow(label, field)
        self._labels["key"].setBuddy(self.providerApiKey)
        form.addRow("", self.providerDefault)
        form.addRow("", self.testConnectionButton)
        form.addRow("", self.connectionResult)
        row.addWidget(self.providerForm, 3)
        self.providerForm.setEnabled(False)
        self.removeProviderButton.setEnabled(False)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Set every string on the page in the current language."""
        self.addProviderButton.setText(self.tr("Add"))
        self.removeProviderButton.setText(self.tr("Remove"))
        self.forgetKeyButton.setText(self.tr("Forget key"))
        field = self.providerModel.lineEdit()  # the combo box is editable: it has one
        if field is not None:
            field.setPlaceholderText(self.tr("Ask the server"))
        self.providerDefault.setText(self.tr("Use for new conversations"))
        self.testConnectionButton.setText(self.tr("Test connection"))
        self._labels["kind"].setText(self.tr("Kind"))
        self._labels["name"].setText(self.tr("Name"))
        self._labels["url"].setText(self.tr("Base URL"))
        self._labels["key"].setText(self.tr("API key"))
        self._labels["model"].setText(self.tr("Default model"))
        self.providerList.setAccessibleName(self.tr("Providers"))
        self.providerApiKey.setAccessibleName(self.tr("API key"))
        for index, kind in enumerate(KINDS):
            self.providerKind.setItemText(index, kind_label(kind))
        for row in range(self.providerList.count()):
            item = self.providerList.item(row)
            index = self._index(item.data(Qt.ItemDataRole.UserRole))
            if index >= 0:
                name = self.providers[index].name
                if self.providers[index].id == self._current:
                    name = self.providerName.text().strip() or name  # typed, not yet committed
                item.setText(self._list_text(self.providers[index], name))
        self._update_key_placeholder()

    # ------------------------------------------------------------------ the list

    def load(
        self,
        providers: Sequence[ProviderConfig],
        default_provider_id: str | None,
        has_key: dict[str, bool],
    ) -> None:
        """Show the providers as loaded from the settings."""
        self.providers = list(providers)
        self.default_provider_id = default_provider_id
        self.has_key = dict(has_key)
        self.refresh_list(select=default_provider_id)

    def _list_text(self, config: ProviderConfig, name: str | None = None) -> str:
        name = name or config.name
        if config.id == self.default_id():
            return self.tr("{name} (default)").format(name=name)
        return name

    def refresh_list(self, select: str | None = None) -> None:
        """Rebuild the list from the working copy and show ``select`` (else the first)."""
        self._loading_form = True
        self.providerList.clear()
        for config in self.providers:
            item = QListWidgetItem(self._list_text(config), self.providerList)
            item.setData(Qt.ItemDataRole.UserRole, config.id)
        self._loading_form = False
        target = select if any(p.id == select for p in self.providers) else None
        if target is None and self.providers:
            target = self.providers[0].id
        for row in range(self.providerList.count()):
            if self.providerList.item(row).data(Qt.ItemDataRole.UserRole) == target:
                self.providerList.setCurrentRow(row)
                break
        else:
            self._show_form(None)

    @property
    def current(self) -> str | None:
        """The id of the provider the form shows."""
        return self._current

    def default_id(self) -> str | None:
        """The default provider: the chosen one if it still exists, else the first."""
        default = self.default_provider_id
        if any(p.id == default for p in self.providers):
            return default
        return self.providers[0].id if self.providers else None

    def _index(self, provider_id: str | None) -> int:
        return next((i for i, p in enumerate(self.providers) if p.id == provider_id), -1)

    def _on_provider_selected(self, current: QListWidgetItem | None, _previous: Any) -> None:
        if self._loading_form:
            return
        self.commit_form()
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
            config = self.providers[index]
            self.providerKind.setCurrentIndex(KINDS.index(config.kind))
            self.providerName.setText(config.name)
            self.providerBaseUrl.setText(config.base_url)
            self.providerModel.clear()
            self.providerModel.setEditText(config.default_model)
            self.providerDefault.setChecked(config.id == self.default_id())
            self._update_key_placeholder()
        finally:
            self._loading_form = False

    def _update_key_placeholder(self) -> None:
        provider_id = self._current or ""
        pending = self.pending_keys.get(provider_id)
        if pending == "":
            text = self.tr("The saved key will be forgotten")
        elif pending or self.has_key.get(provider_id):
            text = self.tr("A key is saved; leave empty to keep it")
        else:
            text = self.tr("Not set (local servers need none)")
        self.providerApiKey.setPlaceholderText(text)
        # The field is wide enough for its longest placeholder, in this language.
        longest = max(
            (
                self.tr("The saved key will be forgotten"),
                self.tr("A key is saved; leave empty to keep it"),
                self.tr("Not set (local servers need none)"),
            ),
            key=self.providerApiKey.fontMetrics().horizontalAdvance,
        )
        self.providerApiKey.setMinimumWidth(
            self.providerApiKey.fontMetrics().horizontalAdvance(longest) + 24
        )
        self.forgetKeyButton.setEnabled(
            bool(pending) or (pending is None and bool(self.has_key.get(provider_id)))
        )

    def commit_form(self) -> None:
        """Copy the form into the working list (and the typed key into pending keys)."""
        index = self._index(self._current)
        if index < 0:
            return
        old = self.providers[index]
        kind = self.providerKind.currentData() or old.kind
        name = self.providerName.text().strip() or kind_label(kind)
        base_url = self.providerBaseUrl.text().strip() or DEFAULT_BASE_URLS[kind]
        self.providers[index] = replace(
            old,
            kind=kind,
            name=name,
            base_url=base_url,
            default_model=self.providerModel.currentText().strip(),
        )
        key = self.providerApiKey.text().strip()
        if key:
            self.pending_keys[old.id] = key
        if self.providerDefault.isChecked():
            self.default_provider_id = old.id
        elif self.default_provider_id == old.id:
            self.default_provider_id = None

    def _on_kind_changed(self, _index: int) -> None:
        if self._loading_form:
            return
        kind = self.providerKind.currentData()
        current_url = self.providerBaseUrl.text().strip()
        # A URL the person typed is theirs; only a default (or nothing) follows the kind.
        if not current_url or current_url in DEFAULT_BASE_URLS.values():
            self.providerBaseUrl.setText(DEFAULT_BASE_URLS[kind])
        current_name = self.providerName.text().strip()
        if not current_name or current_name in (kind_label(k) for k in KINDS):
            self.providerName.setText(kind_label(kind))
        self._relabel()

    def _on_name_edited(self, _text: str) -> None:
        self._relabel()

    def _relabel(self, *_args: Any) -> None:
        """Make the list follow the form as it is edited: the current provider's name (or its
        kind's, when the name is empty, as `commit_form` will store it) and "(default)"."""
        if self._loading_form:
            return
        # The default as `commit_form` then `default_id` will make it.
        default = self.default_provider_id
        if self._current is not None:
            if self.providerDefault.isChecked():
                default = self._current
            elif default == self._current:
                default = None
        if not any(p.id == default for p in self.providers):
            default = self.providers[0].id if self.providers else None
        for row in range(self.providerList.count()):
            item = self.providerList.item(row)
            index = self._index(item.data(Qt.ItemDataRole.UserRole))
            if index < 0:
                continue
            config = self.providers[index]
            name = config.name
            if config.id == self._current:
                kind = self.providerKind.currentData() or config.kind
                name = self.providerName.text().strip() or kind_label(kind)
            text = self.tr("{name} (default)").format(name=name) if config.id == default else name
            if item.text() != text:
                item.setText(text)

    def add_provider(self) -> None:
        """Add a new OpenAI-compatible provider and put the cursor in its name."""
        self.commit_form()
        config = ProviderConfig(
            id=new_provider_id(),
            kind="openai",
            name=kind_label("openai"),
            base_url=DEFAULT_BASE_URLS["openai"],
        )
        self.providers.append(config)
        self.refresh_list(select=config.id)
        self.providerName.setFocus()
        self.providerName.selectAll()

    def add_found(self, config: ProviderConfig, api_key: str | None) -> None:
        """Add a provider the first-run page found (with the key it found, if any)."""
        self.commit_form()
        self.providers.append(config)
        if api_key is not None:
            self.pending_keys[config.id] = api_key
        self.refresh_list(select=config.id)

    def _on_remove_provider(self) -> None:
        index = self._index(self._current)
        if index < 0:
            return
        removed = self.providers.pop(index)
        self.removed.add(removed.id)
        self.pending_keys.pop(removed.id, None)
        if self.default_provider_id == removed.id:
            self.default_provider_id = None
        self._current = None
        self.refresh_list()

    def _on_forget_key(self) -> None:
        if self._current is None:
            return
        self.providerApiKey.clear()
        self.pending_keys[self._current] = ""
        self._update_key_placeholder()

    # ------------------------------------------------------------------ after a save

    def key_saved(self, provider_id: str, key: str) -> None:
        """A save stored (or forgot, for "") this provider's key."""
        self.has_key[provider_id] = bool(key)
        if self.pending_keys.get(provider_id) == key:
            del self.pending_keys[provider_id]

    def after_save(self, located: dict[str, bool], default_provider_id: str | None) -> None:
        """Keep the key locations the save learned and edits made while it ran."""
        self.providers = [
            replace(p, key_in_keychain=located.get(p.id, p.key_in_keychain)) for p in self.providers
        ]
        self.default_provider_id = default_provider_id
        if not shiboken6.isValid(self):  # the dialog was closed and deleted meanwhile
            return
        self.providerApiKey.clear()
        self._update_key_placeholder()
        self.refresh_list(select=self._current)

    # ------------------------------------------------------------------ testing

    def _on_test_connection(self) -> None:
        self.commit_form()
        index = self._index(self._current)
        if index < 0:
            return
        self.testConnectionButton.setEnabled(False)
        self.connectionResult.setText(self.tr("Connecting…"))
        self._spawn(self._test_connection(self.providers[index]))

    async def _test_connection(self, config: ProviderConfig) -> None:
        key = self.pending_keys.get(config.id) or None
        model = None
        try:
            model = await self._store.build_model(
                config, api_key=key, timeout=TEST_TIMEOUT, max_attempts=1
            )
            names = _model_names(await model.list_models())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = describe_error(exc, engine_language(), where=config.base_url, secret=key)[0]
            log.info("Connection test for %s failed: %s", config.name, message)
            self._finish_test(config.id, False, message)
            return
        finally:
            if model is not None:
                with contextlib.suppress(Exception):
                    await model.aclose()
        if names:
            shown = ", ".join(names[:8]) + ("…" if len(names) > 8 else "")
            message = self.tr("Connected. %n model(s): {names}", "", len(names)).format(names=shown)
        else:
            message = self.tr("Connected, but the server lists no models.")
        self._finish_test(config.id, True, message, names)

    def _finish_test(
        self, provider_id: str, ok: bool, message: str, names: Sequence[str] = ()
    ) -> None:
        if not shiboken6.isValid(self):
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

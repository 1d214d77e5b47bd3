"""Languages: the shipped Chinese translation loads, is complete, and keeps every placeholder."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QLocale
from PySide6.QtWidgets import QApplication

from ui.i18n import install_translator, resolve_language, translations_dir
from ui.settings import SettingsStore
from ui.settings_dialog import SettingsDialog

_LOOPS: list[object] = []


@pytest.fixture(autouse=True)
async def keep_loop_alive() -> AsyncIterator[None]:
    """Keep this test's qasync loop referenced for the whole run.

    A closed qasync loop still has Qt timers registered on its timer object (every
    cancelled ``call_later``: httpx timeouts, ``wait_for``). If the garbage collector frees
    it, one of those timers later fires on freed memory: SIGSEGV in a later test.
    """
    _LOOPS.append(asyncio.get_running_loop())
    yield


TS = translations_dir() / "continuo_zh_CN.ts"
QM = translations_dir() / "continuo_zh_CN.qm"


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[str]:
    """The app speaking Simplified Chinese for one test, then English again."""
    chosen = install_translator(qapp, "zh_CN")
    yield chosen
    install_translator(qapp, "en")


def _messages() -> list[tuple[str, str, ET.Element]]:
    root = ET.parse(TS).getroot()
    return [
        (context.findtext("name") or "", message.findtext("source") or "", message)
        for context in root.iter("context")
        for message in context.iter("message")
    ]


def test_translation_files_are_shipped() -> None:
    assert TS.is_file() and QM.is_file()
    assert QM.stat().st_size > 1000


def test_known_strings_come_out_in_chinese(chinese: str) -> None:
    assert chinese == "zh_CN"
    assert QCoreApplication.translate("SettingsDialog", "Test connection") == "测试连接"
    assert QCoreApplication.translate("MainWindow", "Send") == "发送"
    # Qt's own strings (standard buttons) are translated too.
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"


async def test_dialog_built_after_install_speaks_chinese(qtbot, tmp_path, chinese) -> None:
    dialog = SettingsDialog(SettingsStore(tmp_path, use_keychain=False), servers=[], environ={})
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "设置"
    assert dialog.testConnectionButton.text() == "测试连接"
    assert dialog.tabs.tabText(0) == "服务商"
    # Language names are written in themselves, whatever the current language.
    assert dialog.languageCombo.itemText(2) == "简体中文"
    await dialog.wait_idle()


def test_english_removes_the_translation(qapp: QApplication) -> None:
    install_translator(qapp, "zh_CN")
    assert install_translator(qapp, "en") == "en"
    assert QCoreApplication.translate("SettingsDialog", "Test connection") == "Test connection"


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("zh_CN", "zh_CN"),
        ("zh_SG", "zh_CN"),
        ("zh_TW", "en"),
        ("zh_HK", "en"),
        ("en_US", "en"),
        ("de_DE", "en"),
    ],
)
def test_system_language_follows_the_locale(locale: str, expected: str) -> None:
    assert resolve_language("system", QLocale(locale)) == expected
    assert resolve_language("zh_CN", QLocale(locale)) == "zh_CN"
    assert resolve_language("en", QLocale(locale)) == "en"


def test_every_string_is_translated_and_keeps_its_placeholders() -> None:
    messages = _messages()
    assert len(messages) > 50
    unfinished = [
        (context, source)
        for context, source, message in messages
        if message.find("translation").get("type") == "unfinished"  # type: ignore[union-attr]
        or not (message.findtext("translation") or "").strip()
    ]
    assert unfinished == [], "run pyside6-lupdate and translate these"
    placeholder = re.compile(r"\{[a-z_]*\}")
    for context, source, message in messages:
        translation = message.findtext("translation") or ""
        assert sorted(placeholder.findall(translation)) == sorted(placeholder.findall(source)), (
            context,
            source,
            translation,
        )
        # A mnemonic (&F) must survive translation, or the menu loses its shortcut.
        assert ("&" in source) == ("&" in translation), (context, source, translation)

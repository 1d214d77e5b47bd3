"""Languages: the shipped Chinese translation loads, is complete, keeps every placeholder, and an
open dialog follows a language change at once."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QWidget

from tests.support.wait import until
from ui.common.i18n import install_translator, resolve_language, translations_dir
from ui.settings.dialog import SettingsDialog
from ui.settings.store import SettingsStore

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
    assert QCoreApplication.translate("ProviderPage", "Test connection") == "测试连接"
    assert QCoreApplication.translate("ComposerBar", "Send") == "发送"
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


async def test_open_dialog_follows_a_language_change(qtbot, qapp, tmp_path) -> None:
    """The dialog and a row the first-run page found switch language while open, and back."""
    install_translator(qapp, "en")
    dialog = SettingsDialog(
        SettingsStore(tmp_path, use_keychain=False),
        servers=[],
        environ={"OPENAI_API_KEY": "sk-test-not-a-real-key"},
        first_run=True,
    )
    qtbot.addWidget(dialog)
    dialog.open()
    await until(lambda: dialog.probeAgainButton.isEnabled(), what="the first-run page's search")
    (row,) = dialog.findChildren(QWidget, "foundRow")
    (button,) = row.findChildren(QPushButton, "addFoundButton")
    assert (button.text(), dialog.providerDefault.text()) == ("Add", "Use for new conversations")
    assert "API key from OPENAI_API_KEY" in row.findChild(QLabel).text()
    try:
        install_translator(qapp, "zh_CN")
        await until(lambda: dialog.windowTitle() == "设置", what="the dialog in Chinese")
        assert button.text() == "添加"
        assert "来自 OPENAI_API_KEY 的 API 密钥" in row.findChild(QLabel).text()
        assert dialog.discoveryStatus.text() == "找到 1 项："
        assert dialog.providerDefault.text() == "用于新对话"
        assert dialog.providerKind.itemText(0) == "OpenAI 兼容"
    finally:
        install_translator(qapp, "en")
    await until(lambda: dialog.windowTitle() == "Settings", what="the dialog in English")
    assert button.text() == "Add"
    await dialog.wait_idle()


def test_english_removes_the_translation(qapp: QApplication) -> None:
    install_translator(qapp, "zh_CN")
    assert install_translator(qapp, "en") == "en"
    assert QCoreApplication.translate("ProviderPage", "Test connection") == "Test connection"


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


def _translations(message: ET.Element) -> list[str]:
    """A message's translation, or each of its plural forms (a "%n" string)."""
    forms = [form.text or "" for form in message.iter("numerusform")]
    return forms or [message.findtext("translation") or ""]


def test_every_string_is_translated_and_keeps_its_placeholders() -> None:
    messages = _messages()
    assert len(messages) > 50
    unfinished = [
        (context, source)
        for context, source, message in messages
        if message.find("translation").get("type") == "unfinished"  # type: ignore[union-attr]
        or not all(text.strip() for text in _translations(message))
    ]
    assert unfinished == [], "run pyside6-lupdate and translate these"
    placeholder = re.compile(r"\{[a-z_]*\}|%n")
    for context, source, message in messages:
        for translation in _translations(message):
            assert sorted(placeholder.findall(translation)) == sorted(
                placeholder.findall(source)
            ), (context, source, translation)
            # A mnemonic (&F) must survive translation, or the menu loses its shortcut.
            assert ("&" in source) == ("&" in translation), (context, source, translation)


def _tool(name: str) -> str:
    """The PySide6 tool beside this Python (pyside6-lupdate, pyside6-lrelease)."""
    path = Path(sys.executable).parent / name
    assert path.exists(), f"{name} is missing from the venv (it ships with PySide6)"
    return str(path)


def test_translation_covers_every_string_in_the_code(tmp_path: Path) -> None:
    """lupdate over ui/ finds nothing the shipped .ts lacks (a new string needs translating).

    To refresh: ``pyside6-lupdate $(find ui -name '*.py') -ts
    resources/translations/continuo_zh_CN.ts -no-obsolete``, translate, then lrelease.
    """
    fresh = tmp_path / "continuo_zh_CN.ts"
    shutil.copy(TS, fresh)
    sources = sorted(str(p) for p in (Path(__file__).parents[2] / "ui").rglob("*.py"))
    subprocess.run(
        [_tool("pyside6-lupdate"), *sources, "-ts", str(fresh), "-no-obsolete", "-silent"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    root = ET.parse(fresh).getroot()
    untranslated = [
        (context.findtext("name"), message.findtext("source"))
        for context in root.iter("context")
        for message in context.iter("message")
        if message.find("translation").get("type") == "unfinished"  # type: ignore[union-attr]
    ]
    assert untranslated == [], "new strings without a Chinese translation"


def test_compiled_translation_matches_its_source(tmp_path: Path) -> None:
    rebuilt = tmp_path / "continuo_zh_CN.qm"
    subprocess.run(
        [_tool("pyside6-lrelease"), str(TS), "-qm", str(rebuilt), "-silent"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert rebuilt.read_bytes() == QM.read_bytes(), "run pyside6-lrelease on the .ts"

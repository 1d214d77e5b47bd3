"""Counts read as real plurals, in English and Chinese (issue 20, item 16).

"2 model(s)" was the window's way of counting. The strings now count with Qt's ``%n`` and
plural forms: English from its plural-only catalog (``continuo_en.qm``), Chinese from its
translation (one form). Driven on the real window: Test connection in Settings › Providers
and an import on Settings › Tools; and the first-run page's found server.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from tests.support.wait import until
from tests.ui.conftest import close_window, next_signal
from tests.ui.test_settings_dialog import ollama_port
from tests.ui.test_tool_servers import _window
from ui.common.i18n import install_translator, translations_dir
from ui.settings.dialog import SettingsDialog
from ui.settings.first_run import LocalServer
from ui.settings.store import SettingsStore

__all__ = ["ollama_port"]  # a fixture these tests use

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def english(qapp: QApplication) -> Iterator[None]:
    """The window's English, as the app installs it at start (plural forms included)."""
    assert install_translator(qapp, "en") == "en"
    yield
    install_translator(qapp, "en")


async def _import(page, path) -> str:
    finished = asyncio.ensure_future(next_signal(page.importFinished, 20))
    page.import_file()
    assert page.fileDialog is not None
    page.fileDialog.selectFile(str(path))
    page.fileDialog.accept()
    ok, text = await finished
    assert ok, text
    assert page.toolsMessage.text() == text
    return text


def _servers_file(tmp_path, name: str, count: int):
    path = tmp_path / name
    servers = {f"s{i}": {"command": "uvx", "args": [f"server-{i}"]} for i in range(count)}
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


async def test_counts_in_the_window_are_real_plurals(tmp_path, provider_server, english, qapp):
    window = await _window(tmp_path / "data", provider_server)
    dialog = window.open_settings()
    assert dialog is not None
    await until(lambda: dialog.is_loaded, what="the settings to load")

    # Test connection: the loopback provider lists two models.
    dialog.tabs.setCurrentWidget(dialog.providersPage)
    dialog.providerList.setCurrentRow(0)
    tested = asyncio.ensure_future(next_signal(dialog.connectionTested, 20))
    dialog.testConnectionButton.click()
    ok, message = await tested
    assert ok, message
    assert message.startswith("Connected. 2 models: ") and "(s)" not in message

    # Importing one server, then two.
    page = dialog.toolsPage
    dialog.tabs.setCurrentWidget(page)
    one = await _import(page, _servers_file(tmp_path, "one.json", 1))
    assert one == "Imported 1 server; it is saved with Save or Apply."
    two = await _import(page, _servers_file(tmp_path, "two.json", 2))
    assert two.startswith("Imported 2 servers; they are saved with Save or Apply.")

    # In Chinese: one form, no "(s)" to translate around.
    install_translator(qapp, "zh_CN")
    three = await _import(page, _servers_file(tmp_path, "three.json", 3))
    assert three.startswith("已导入 3 个服务器；")
    tested = asyncio.ensure_future(next_signal(dialog.connectionTested, 20))
    dialog.testConnectionButton.click()
    ok, message = await tested
    assert message.startswith("连接成功。共 2 个模型："), message
    install_translator(qapp, "en")
    dialog.reject()
    await close_window(window)


async def test_a_found_server_counts_its_model(qtbot, tmp_path, ollama_port, english, qapp):
    dialog = SettingsDialog(
        SettingsStore(tmp_path, use_keychain=False),
        servers=[LocalServer("Ollama", "ollama", ollama_port)],
        environ={},
        first_run=True,
    )
    qtbot.addWidget(dialog)
    found = asyncio.ensure_future(next_signal(dialog.discoveryFinished))
    dialog.open()
    await found

    def row_texts() -> list[str]:
        return [label.text() for label in dialog.firstRunPage.findChildren(QLabel)]

    address = f"127.0.0.1:{ollama_port}"
    assert any(f"running at {address}, 1 model" in t and "(s)" not in t for t in row_texts())
    install_translator(qapp, "zh_CN")
    await until(
        lambda: any(f"运行于 {address}，共 1 个模型" in t for t in row_texts()),
        what="the found server said in Chinese",
    )
    install_translator(qapp, "en")
    await dialog.wait_idle()


def test_the_english_catalog_has_the_plural_forms_of_every_count(tmp_path: Path) -> None:
    """lupdate -pluralonly over ui/ finds no "%n" string the English catalog lacks, each has
    its two forms, and the shipped .qm is compiled from it."""
    tools = Path(sys.executable).parent
    fresh = tmp_path / "continuo_en.ts"
    shutil.copy(translations_dir() / "continuo_en.ts", fresh)
    sources = sorted(str(p) for p in (Path(__file__).parents[2] / "ui").rglob("*.py"))
    subprocess.run(
        [
            str(tools / "pyside6-lupdate"),
            *sources,
            "-ts",
            str(fresh),
            "-no-obsolete",
            "-pluralonly",
            "-silent",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    messages = list(ET.parse(fresh).getroot().iter("message"))
    assert len(messages) >= 3
    for message in messages:
        forms = [f.text or "" for f in message.iter("numerusform")]
        assert len(forms) == 2 and all("%n" in f and "(s)" not in f for f in forms), forms
    rebuilt = tmp_path / "continuo_en.qm"
    subprocess.run(
        [str(tools / "pyside6-lrelease"), str(fresh), "-qm", str(rebuilt), "-silent"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert rebuilt.read_bytes() == (translations_dir() / "continuo_en.qm").read_bytes()

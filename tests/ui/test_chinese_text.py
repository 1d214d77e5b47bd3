"""Chinese as it is written (issue 20, item 18), on the real window.

Sentences joined by the window follow a Chinese full stop directly ("…断开了。已收到…", no
space); 账户 is spelt one way in the translation and the engine's catalog; and Qt's own file
dialog speaks Chinese throughout ("查找范围", "文件类型", "文件夹"), including the words that
PySide6's qtbase_zh_CN.qm lacks (`ui.common.qt_strings`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QTreeView

from engine.sentences import _SENTENCES, join_sentences
from tests.support.provider_server import Fault, Turn
from tests.support.wait import until
from tests.ui.conftest import close_window, open_window, seed_provider
from tests.ui.test_interrupted_notice import STORY, _answers, _view
from ui.common.i18n import install_translator, translations_dir
from ui.common.qt_strings import QT_STRINGS
from ui.conversation.transcript import ItemState

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    assert install_translator(qapp, "zh_CN") == "zh_CN"
    yield
    install_translator(qapp, "en")


async def test_a_cut_off_answer_says_its_two_sentences_without_a_space(
    tmp_path, provider_server, chinese
):
    provider_server.script(Turn(text=STORY, chunk_size=6, fault=Fault.RESET, fault_after=6))
    store = await seed_provider(tmp_path, provider_server)
    window = await open_window(tmp_path, settings_store=store)
    window.composer.setPlainText("讲个故事")
    window.send_button.click()
    await until(lambda: window.resume_button.isVisible(), what="Resume")
    (answer,) = _answers(window)
    assert answer.state is ItemState.INTERRUPTED
    text = _view(window, answer).status.text()
    assert text == "⚠ 回答完成前，与服务商的连接断开了。已收到的内容已保存。"
    await close_window(window)


def test_sentences_join_as_their_language_writes_them():
    assert (
        join_sentences("连接断开了。", "已收到的内容已保存。") == "连接断开了。已收到的内容已保存。"
    )
    assert join_sentences("It broke.", "", "What arrived is saved.") == (
        "It broke. What arrived is saved."
    )
    assert join_sentences("（日志：/tmp/x.log）", "请重试。") == "（日志：/tmp/x.log）请重试。"
    assert join_sentences("Quoted: “失败。”", "Try again.") == "Quoted: “失败。” Try again."


def test_one_spelling_of_account():
    translations = [
        "".join(t.itertext())
        for t in ET.parse(translations_dir() / "continuo_zh_CN.ts").getroot().iter("translation")
    ]
    chinese = [zh for _en, zh in _SENTENCES.values()]
    for text in (*translations, *chinese):
        assert not re.search("帐[户号]", text), text
    assert any("账户" in t for t in translations) and any("账户" in t for t in chinese)


async def test_qts_file_dialog_speaks_chinese(tmp_path, provider_server, chinese):
    folder = tmp_path / "files"
    (folder / "a folder").mkdir(parents=True)
    (folder / "servers.json").write_text("{}")
    store = await seed_provider(tmp_path / "data", provider_server)
    window = await open_window(tmp_path / "data", settings_store=store)
    dialog = window.open_tool_settings()
    assert dialog is not None
    page = dialog.toolsPage
    await until(lambda: page.is_loaded, what="the Tools page")
    page.import_file()
    files = page.fileDialog
    assert files is not None
    files.setDirectory(str(folder))
    labels = {label.objectName(): label.text() for label in files.findChildren(QLabel)}
    assert labels["lookInLabel"] == "查找范围(&L)："
    assert labels["fileTypeLabel"] == "文件类型(&T)："
    assert labels["fileNameLabel"] == "文件名称(&N)："
    tree = files.findChild(QTreeView)
    model = tree.model()
    await until(lambda: model.rowCount(tree.rootIndex()) == 2, what="the folder listed")
    kinds = {
        model.index(row, 0, tree.rootIndex()).data(): model.index(row, 2, tree.rootIndex()).data()
        for row in range(2)
    }
    assert kinds["a folder"] == "文件夹"
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == ["名称", "体积", "类型", "修改日期"]
    # No English word on a label or button of Qt's (file names and our filter aside).
    words = [
        w.text()
        for w in files.findChildren(QLabel) + files.findChildren(QAbstractButton)
        if w.isVisible()
    ]
    assert not [w for w in words if re.search("[A-Za-z]{2,}", w)], words
    files.reject()
    dialog.reject()
    await close_window(window)


def test_qts_missing_strings_are_ours_and_not_qts(chinese):
    # Each string supplemented for Qt is said in Chinese.
    for context, source, disambiguation in QT_STRINGS:
        said = QCoreApplication.translate(context, source, disambiguation)
        assert said != source and not re.search("[A-Za-z]{2,}", said), (source, said)

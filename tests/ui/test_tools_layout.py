"""The Tools page and the header's Tools button, laid out for a person (issue 20, item 17).

On the real window: without a keychain the Tools page shows one keychain warning (its own,
about the servers' values), not the dialog's as well; a server whose command is a long path is
shown whole, wrapped, with no horizontal scroll bar hiding its state; and the header's Tools
button draws its menu arrow beside its label, not on the label's last letter.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from tests.support.wait import until
from tests.ui.conftest import close_window
from tests.ui.test_tool_servers import _srv, _window, _write_mcp_json

pytestmark = pytest.mark.timeout(120)

LONG = "/opt/tools/a-rather-long-folder-name/another-long-folder/bin/mcp-server-with-a-long-name"


async def _tools_page(window):
    dialog = window.open_tool_settings()
    assert dialog is not None
    page = dialog.toolsPage
    await until(lambda: page.is_loaded and dialog.is_loaded, what="the Tools page to load")
    return dialog, page


async def test_one_keychain_warning_on_the_tools_page(tmp_path, provider_server, no_keyring):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    window = await _window(tmp_path, provider_server)
    dialog, page = await _tools_page(window)
    assert dialog.tabs.currentWidget() is page

    def warnings() -> list[str]:
        return [
            label.objectName()
            for label in dialog.findChildren(QLabel)
            if label.isVisible() and label.text().startswith("No system keychain was found")
        ]

    assert warnings() == ["toolsKeychainWarning"]
    assert str(tmp_path / "mcp.json") in page.toolsKeychainWarning.text()
    # The Providers page still says where API keys are kept.
    dialog.tabs.setCurrentWidget(dialog.providersPage)
    assert warnings() == ["keychainWarning"]
    dialog.tabs.setCurrentWidget(page)
    assert warnings() == ["toolsKeychainWarning"]
    dialog.reject()
    await close_window(window)


async def test_a_long_command_is_shown_whole_without_a_horizontal_scroll_bar(
    tmp_path, provider_server
):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path), "long": {"command": LONG}})
    window = await _window(tmp_path, provider_server)
    dialog, page = await _tools_page(window)
    dialog.resize(900, 620)
    listing = page.toolServerList
    await until(lambda: listing.count() == 2 and listing.viewport().width() > 0)
    assert not listing.horizontalScrollBar().isVisible()
    viewport = listing.viewport().width()
    metrics = listing.fontMetrics()
    for row in range(listing.count()):
        item = listing.item(row)
        rect = listing.visualItemRect(item)
        assert rect.left() >= 0 and rect.right() <= viewport, (item.text(), rect, viewport)
        # The whole text fits the row's width once wrapped (the check box takes its share).
        needed = metrics.boundingRect(
            QRect(0, 0, rect.width() - 2 * metrics.height(), 10_000),
            Qt.TextFlag.TextWrapAnywhere,
            item.text(),
        )
        assert needed.height() <= rect.height(), (item.text(), needed, rect)
        assert item.toolTip() == item.text()
    assert LONG in listing.item(1).text()
    dialog.reject()
    await close_window(window)


def _ink_columns(image: QImage, other: QImage) -> list[int]:
    """The x of every column where the two pictures differ."""
    return sorted(
        {
            x
            for x in range(image.width())
            for y in range(image.height())
            if image.pixel(x, y) != other.pixel(x, y)
        }
    )


async def test_the_tools_buttons_arrow_is_beside_its_label(tmp_path, provider_server):
    _write_mcp_json(tmp_path, {"srv": _srv(tmp_path)})
    window = await _window(tmp_path, provider_server)
    button = window.tool_server_button
    await until(lambda: button.isVisible(), what="the Tools button")
    assert button.text() == "Tools"
    assert button.width() >= button.sizeHint().width()
    # Three pictures of the same button at its size: as shown, without its label, and
    # without its label or menu; the label's pixels and the arrow's stay apart.
    shown = button.grab().toImage()
    button.setText("")
    arrow_only = button.grab().toImage()
    menu = button.menu()
    button.setMenu(None)
    bare = button.grab().toImage()
    button.setMenu(menu)
    button.retranslate()
    label = _ink_columns(shown, arrow_only)
    arrow = _ink_columns(arrow_only, bare)
    assert label and arrow, (label, arrow)
    # Before, the arrow's first column touched the label's last one ("Tools" ran into it).
    assert min(arrow) - max(label) >= 4, (max(label), min(arrow))
    await close_window(window)

"""The look: explicit light and dark palettes, "system" following the OS, the style sheet."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from ui.common.theme import apply_palette, effective_scheme, style_sheet


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    yield qapp
    if style:
        qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)
    qapp.setProperty("continuoTheme", None)
    qapp.setProperty("continuoScheme", None)
    qapp.setProperty("continuoFusion", None)


def _lightness(app: QApplication, role: QPalette.ColorRole) -> int:
    return app.palette().color(role).lightness()


def test_light_and_dark_are_forced(app: QApplication) -> None:
    assert apply_palette(app, "dark") == "dark"
    assert app.property("continuoFusion") is True
    assert _lightness(app, QPalette.ColorRole.Window) < 64
    assert _lightness(app, QPalette.ColorRole.WindowText) > 192
    assert "#sendButton" in app.styleSheet()

    assert apply_palette(app, "light") == "light"
    assert _lightness(app, QPalette.ColorRole.Window) > 192
    assert _lightness(app, QPalette.ColorRole.WindowText) < 64
    assert app.property("continuoTheme") == "light"


def test_system_follows_the_platform_scheme(app: QApplication) -> None:
    expected = "dark" if app.styleHints().colorScheme() == Qt.ColorScheme.Dark else "light"
    assert effective_scheme("system", app) == expected
    assert apply_palette(app, "system") == expected
    assert app.property("continuoTheme") == "system"


def test_unknown_mode_is_refused(app: QApplication) -> None:
    with pytest.raises(ValueError, match="Unknown theme"):
        apply_palette(app, "sepia")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_style_sheet_styles_the_window_names(scheme: str) -> None:
    sheet = style_sheet(scheme)
    for name in ("sessionList", "composer", "sendButton", "resumeButton", "errorBanner"):
        assert f"#{name}" in sheet
    # Sizes in device-independent px scale with the screen; no point sizes that would not.
    assert "pt;" not in sheet

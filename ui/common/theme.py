"""Light and dark: the palettes and the small style sheet that make the window look like a chat.

Owns the look. ``apply_palette(app, "system")`` follows the OS (Qt 6.5+
``QStyleHints.colorScheme``, re-applied when the OS switches); "light" and "dark" force a
palette, which screenshots need because an offscreen platform has no system theme. The Fusion
style is used so a palette looks the same on every platform.

The style sheet is written in the palette's own roles where it can (``palette(base)``) and
in device-independent pixels, which Qt scales with the screen: at 200% every size doubles,
text stays readable and nothing is clipped. It styles DESIGN.md's objectNames only, so
widgets without one keep the plain Fusion look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    from PySide6.QtCore import Qt

__all__ = [
    "MODES",
    "apply_palette",
    "dark_palette",
    "effective_scheme",
    "light_palette",
    "style_sheet",
]

MODES = ("system", "light", "dark")

# Accent used for the send button, links and selection, per scheme.
_ACCENT = {"light": "#2563eb", "dark": "#60a5fa"}
_ACCENT_TEXT = {"light": "#ffffff", "dark": "#0b1220"}

_following_system = False  # whether colorSchemeChanged is connected


def _palette(colors: dict[QPalette.ColorRole, str], disabled_text: str) -> QPalette:
    palette = QPalette()
    for role, value in colors.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled_text))
    return palette


def light_palette() -> QPalette:
    """Return the light palette: white surfaces, near-black text, a blue accent."""
    R = QPalette.ColorRole
    return _palette(
        {
            R.Window: "#f6f7f9",
            R.WindowText: "#111827",
            R.Base: "#ffffff",
            R.AlternateBase: "#f1f3f6",
            R.Text: "#111827",
            R.PlaceholderText: "#6b7280",
            R.Button: "#ffffff",
            R.ButtonText: "#111827",
            R.BrightText: "#ffffff",
            R.Highlight: _ACCENT["light"],
            R.HighlightedText: _ACCENT_TEXT["light"],
            R.ToolTipBase: "#111827",
            R.ToolTipText: "#f9fafb",
            R.Link: "#1d4ed8",
            R.LinkVisited: "#6d28d9",
            R.Mid: "#d1d5db",
            R.Midlight: "#e5e7eb",
            R.Dark: "#9ca3af",
            R.Shadow: "#6b7280",
            R.Light: "#ffffff",
        },
        disabled_text="#9ca3af",
    )


def dark_palette() -> QPalette:
    """Return the dark palette: charcoal surfaces, soft white text, a light-blue accent."""
    R = QPalette.ColorRole
    return _palette(
        {
            R.Window: "#16181d",
            R.WindowText: "#e5e7eb",
            R.Base: "#1f2228",
            R.AlternateBase: "#262a31",
            R.Text: "#e5e7eb",
            R.PlaceholderText: "#8b929e",
            R.Button: "#262a31",
            R.ButtonText: "#e5e7eb",
            R.BrightText: "#ffffff",
            R.Highlight: _ACCENT["dark"],
            R.HighlightedText: _ACCENT_TEXT["dark"],
            R.ToolTipBase: "#e5e7eb",
            R.ToolTipText: "#111827",
            R.Link: "#93c5fd",
            R.LinkVisited: "#c4b5fd",
            R.Mid: "#3a3f48",
            R.Midlight: "#2f333b",
            R.Dark: "#0f1115",
            R.Shadow: "#000000",
            R.Light: "#3a3f48",
        },
        disabled_text="#6b7280",
    )


def effective_scheme(mode: str, app: QGuiApplication | None = None, *, quick: bool = False) -> str:
    """Return "light" or "dark" for ``mode``; "system" asks the OS (light if it cannot say).

    ``quick`` (the first frame): judge "system" by the platform palette's window colour
    instead of asking ``QStyleHints.colorScheme`` — the answer's type is in PySide6's ``Qt``
    namespace, whose creation costs about 20 ms before the first paint. `apply_palette`
    asks properly once the window is up, and changes the look only if the two disagree.
    """
    if mode in ("light", "dark"):
        return mode
    app = app or QGuiApplication.instance()  # type: ignore[assignment]
    if app is None:
        return "light"
    if quick:
        window = app.palette().color(QPalette.ColorRole.Window)
        return "dark" if window.lightness() < 128 else "light"
    from PySide6.QtCore import Qt

    return "dark" if app.styleHints().colorScheme() == Qt.ColorScheme.Dark else "light"


def style_sheet(scheme: str) -> str:
    """Return the style sheet for "light" or "dark"."""
    accent, accent_text = _ACCENT[scheme], _ACCENT_TEXT[scheme]
    border = "#d1d5db" if scheme == "light" else "#3a3f48"
    handle_hover = "#9ca3af" if scheme == "light" else "#6b7280"
    sidebar = "#eef0f3" if scheme == "light" else "#121418"
    banner_bg = "#fef2f2" if scheme == "light" else "#3b1d1d"
    banner_fg = "#991b1b" if scheme == "light" else "#fecaca"
    warn_bg = "#fffbeb" if scheme == "light" else "#3a2e12"
    warn_fg = "#92400e" if scheme == "light" else "#fde68a"
    return f"""
QScrollArea#transcript QScrollBar:vertical {{
    background: transparent;
    width: 10px;
    margin: 2px;
}}
QScrollArea#transcript QScrollBar::handle:vertical {{
    background: {border};
    border-radius: 3px;
    min-height: 32px;
}}
QScrollArea#transcript QScrollBar::handle:vertical:hover {{
    background: {handle_hover};
}}
QScrollArea#transcript QScrollBar::add-line:vertical,
QScrollArea#transcript QScrollBar::sub-line:vertical {{
    height: 0;
}}
QScrollArea#transcript QScrollBar::add-page:vertical,
QScrollArea#transcript QScrollBar::sub-page:vertical {{
    background: transparent;
}}
QListView#sessionList, QListView#searchResults {{
    background: {sidebar};
    border: none;
    padding: 6px;
}}
QListView#searchResults::item {{
    border-radius: 8px;
}}
QListView#searchResults::item:selected {{
    background: palette(highlight);
}}
QListView#sessionList::item {{
    padding: 8px 10px;
    border-radius: 8px;
}}
QListView#sessionList::item:selected {{
    background: palette(highlight);
    color: palette(highlighted-text);
}}
QLineEdit#sessionFilter, QPlainTextEdit#composer, QTextEdit#composer {{
    border: 1px solid {border};
    border-radius: 10px;
    padding: 6px 10px;
    background: palette(base);
}}
QPlainTextEdit#composer:focus, QTextEdit#composer:focus, QLineEdit#sessionFilter:focus {{
    border: 1px solid {accent};
}}
QPushButton#sendButton, QPushButton#resumeButton, QPushButton#newChatButton {{
    background: {accent};
    color: {accent_text};
    border: none;
    border-radius: 10px;
    padding: 7px 16px;
    font-weight: 600;
}}
QPushButton#sendButton:disabled {{
    background: {border};
    color: palette(placeholder-text);
}}
QPushButton#stopButton {{
    border: 1px solid {border};
    border-radius: 10px;
    padding: 7px 16px;
}}
QLabel#errorBanner {{
    background: {banner_bg};
    color: {banner_fg};
    border-radius: 8px;
    padding: 8px 12px;
}}
QLabel#resumeLabel {{
    color: palette(placeholder-text);
}}
QLabel#keychainWarning {{
    background: {warn_bg};
    color: {warn_fg};
    border-radius: 8px;
    padding: 8px 12px;
}}
QLabel#connectionResult {{
    padding: 4px 0;
}}
QDialog#settingsDialog QListWidget {{
    border: 1px solid {border};
    border-radius: 8px;
    padding: 4px;
}}
"""


def apply_palette(app: QApplication, mode: str, *, quick: bool = False, sheet: bool = True) -> str:
    """Give ``app`` the light, dark or system look; return the scheme applied.

    With "system", a later OS switch between light and dark is followed without a restart.
    ``quick`` is for the first frame (see `effective_scheme`); call again without it once
    the window is up. ``sheet=False`` sets the palette alone, without the style sheet or
    the Fusion style: the first frame has no widget they style, and parsing the sheet there
    delayed the first paint by about 15 ms, touching the style by about 10 ms.
    """
    global _following_system
    if mode not in MODES:
        raise ValueError(f"Unknown theme {mode!r}; expected one of {MODES}.")
    # Recreating the style re-polishes every widget; do it once, and not at all where Fusion
    # is already the style. (With a style sheet set, app.style() is Qt's style-sheet wrapper,
    # so the style cannot be asked its name after this.) Not for the first frame, which has
    # no widget to style: PySide6 builds the QStyle class and its enums the first time Python
    # touches a style, about 10 ms before the first paint.
    if sheet and app.property("continuoFusion") is not True:
        style = app.style()
        if style is None or style.name().lower() != "fusion":
            app.setStyle("Fusion")
        app.setProperty("continuoFusion", True)
    scheme = effective_scheme(mode, app, quick=quick)
    wanted = style_sheet(scheme) if sheet else ""
    # Setting the same look again would re-polish every widget for nothing.
    if (
        app.property("continuoTheme") != mode
        or app.property("continuoScheme") != scheme
        or app.styleSheet() != wanted
    ):
        app.setPalette(dark_palette() if scheme == "dark" else light_palette())
        app.setStyleSheet(wanted)
        app.setProperty("continuoTheme", mode)
        app.setProperty("continuoScheme", scheme)

    if mode == "system" and not quick and not _following_system:
        app.styleHints().colorSchemeChanged.connect(_on_system_scheme_changed)
        _following_system = True
    return scheme


def _on_system_scheme_changed(_scheme: Qt.ColorScheme) -> None:
    app = QApplication.instance()
    # Only a window still set to "system" follows the OS; an explicit choice stays.
    if isinstance(app, QApplication) and app.property("continuoTheme") == "system":
        apply_palette(app, "system")

"""Dates as the person reads them: in their locale's own short format.

The window's language sets Qt's default locale (``ui.common.i18n``: US English or Simplified
Chinese), but a date is read the way the person's system writes dates: 03/12/2026 in
Britain, 03.12.26 in Germany. The system's locale decides, unless it is the bare "C" locale
of a machine with no locale set (it writes "3 12 2026"), when the window's language does.
"""

from __future__ import annotations

from PySide6.QtCore import QDateTime, QLocale

__all__ = ["date_locale", "short_date"]


def date_locale() -> QLocale:
    """The locale whose date format the window uses (see the module docstring)."""
    for locale in (QLocale.system(), QLocale()):
        if locale.language() not in (QLocale.Language.C, QLocale.Language.AnyLanguage):
            return locale
    return QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)


def short_date(seconds: float) -> str:
    """The local date of the epoch time ``seconds`` in the locale's short format."""
    when = QDateTime.fromSecsSinceEpoch(int(seconds))
    return date_locale().toString(when.date(), QLocale.FormatType.ShortFormat)

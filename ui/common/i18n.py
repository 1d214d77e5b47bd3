"""Which language the window speaks, and loading its translations.

Owns the choice "system" / "en" / "zh_CN" and the `QTranslator`s that carry it out. English
is the source language (the strings in the code), with a small catalog of its own,
``continuo_en.qm``, holding only the plural forms of the strings that count with ``%n``
(``"%n model(s)"`` reads "1 model" or "2 models"; Qt takes plural forms from a catalog, made
by ``lupdate -pluralonly``); Simplified Chinese ships as
``resources/translations/continuo_zh_CN.qm``, made from the ``.ts`` file by
``pyside6-lrelease`` (regenerate the ``.ts`` with ``pyside6-lupdate`` over ``ui/``; see
`update_command`). Qt's own ``qtbase_zh_CN.qm`` is installed alongside so that standard
buttons (OK, Cancel) and dialogs match.

The language is applied when the app starts, and again at once whenever the settings dialog
saves a different one: `install_translator` removes the translators it installed before and
installs the new ones, Qt sends ``QEvent.LanguageChange`` to every widget, and each of
Continuo's widgets sets all its strings again in its ``retranslate`` method (texts, tooltips,
placeholders, accessible names, menus). The engine's sentences (the Resume tooltip, an error
kept with a conversation) follow too: the window passes `engine_language` to the controller,
which asks the engine for them again in the new language.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

__all__ = [
    "SUPPORTED",
    "engine_language",
    "install_translator",
    "installed_language",
    "resolve_language",
    "translations_dir",
    "update_command",
]

log = logging.getLogger(__name__)

# Languages with a translation, besides English (the source).
SUPPORTED = ("zh_CN",)

_INSTALLED: list[QTranslator] = []  # kept alive here: Qt does not own installed translators
_SETTING: list[str] = []  # the setting last given to `install_translator` (at most one)


def translations_dir() -> Path:
    """Return the folder holding ``continuo_<lang>.qm`` (in a checkout or a bundle)."""
    bundle = getattr(sys, "_MEIPASS", None)  # PyInstaller unpacks resources/ beside the code
    root = Path(bundle) if bundle else Path(__file__).resolve().parents[2]
    return root / "resources" / "translations"


def resolve_language(language: str, system_locale: QLocale | None = None) -> str:
    """Map a setting to the language to load: "en" or one of `SUPPORTED`.

    "system" follows the OS locale: any Simplified Chinese locale (zh_CN, zh_SG, zh_Hans_*)
    gets "zh_CN"; Traditional Chinese and everything else get English.
    """
    if language != "system":
        return language if language in SUPPORTED else "en"
    locale = system_locale or QLocale.system()
    if locale.language() == QLocale.Language.Chinese and locale.script() in (
        QLocale.Script.SimplifiedHanScript,
        QLocale.Script.AnyScript,
    ):
        return "zh_CN"
    return "en"


def install_translator(app: QCoreApplication, language: str) -> str:
    """Install the translations for ``language`` ("system", "en" or "zh_CN").

    Returns:
        The language now in effect ("en" when a translation is missing: the app still works,
        in English, and the log says which file was not found).
    """
    for translator in _INSTALLED:
        app.removeTranslator(translator)
    _INSTALLED.clear()
    _SETTING[:] = [language]

    chosen = resolve_language(language)
    if chosen == "en":
        QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
        # Only the plural forms: "%n model(s)" says "1 model" / "2 models" from a catalog.
        plurals = QTranslator(app)
        path = translations_dir() / "continuo_en.qm"
        if plurals.load(str(path)):
            app.installTranslator(plurals)
            _INSTALLED.append(plurals)
        else:
            log.warning("Plural forms %s could not be loaded: counts read 'model(s)'", path)
        return "en"

    ours = QTranslator(app)
    path = translations_dir() / f"continuo_{chosen}.qm"
    if not ours.load(str(path)):
        log.warning("Translation %s could not be loaded; the window stays in English", path)
        return "en"
    app.installTranslator(ours)
    _INSTALLED.append(ours)

    # Qt's own strings (file dialogs, standard buttons); the few it lacks are in ours
    # (`ui.common.qt_strings`). Where Qt says its translations are, else where the bundle keeps them.
    qtbase = QTranslator(app)
    for qt_dir in _qt_translation_dirs():
        if qtbase.load(f"qtbase_{chosen}", qt_dir):
            app.installTranslator(qtbase)
            _INSTALLED.append(qtbase)
            break
    else:
        log.warning(
            "Qt's own qtbase_%s translation was not found: its dialogs stay English", chosen
        )
    QLocale.setDefault(QLocale(chosen))
    log.info("Language: %s", chosen)
    return chosen


def _qt_translation_dirs() -> list[str]:
    dirs = [QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:  # PyInstaller keeps PySide6's files under their package path
        dirs.append(str(Path(bundle) / "PySide6" / "Qt" / "translations"))
    return dirs


def installed_language() -> str | None:
    """The setting ("system", "en", "zh_CN") last installed, or None before the first."""
    return _SETTING[0] if _SETTING else None


def engine_language() -> str:
    """The language the engine's sentences should be in: the window's ("en" or "zh_CN").

    English until a language is installed (tests that install none read English).
    """
    setting = installed_language()
    return resolve_language(setting) if setting else "en"


def update_command() -> list[str]:
    """Return the lupdate command that refreshes the .ts files from the code under ui/."""
    root = Path(__file__).resolve().parents[1]
    sources = sorted(str(p) for p in root.rglob("*.py"))
    ts = [str(translations_dir() / f"continuo_{lang}.ts") for lang in SUPPORTED]
    return ["pyside6-lupdate", *sources, "-ts", *ts]

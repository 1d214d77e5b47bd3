"""Qt's own strings that Qt's Chinese catalog lacks, translated in ours.

Qt's file dialog changed some of its words (it added the mnemonics of "&Look in:" and
"Files of &type:", and moved the file kinds to ``QAbstractFileIconProvider``), and the
``qtbase_zh_CN.qm`` that ships with PySide6 still has only the old ones, so a Chinese file
dialog showed "Look in:", "Files of type:" and "Folder" in English. Listed here, under Qt's
own contexts, ``make translations`` puts them in ``continuo_zh_CN.ts``; our catalog is
installed with Qt's (`ui.common.i18n.install_translator`), so Qt finds them there. Nothing calls
`_qt_strings`: lupdate reads the calls, and a test checks each against Qt's catalog.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

__all__ = ["QT_STRINGS"]

# (context, source, disambiguation) of each string, as Qt looks it up
QT_STRINGS = (
    ("QFileDialog", "&Look in:", None),
    ("QFileDialog", "Files of &type:", None),
    ("QAbstractFileIconProvider", "Drive", None),
    ("QAbstractFileIconProvider", "Folder", "All other platforms"),
    ("QAbstractFileIconProvider", "Shortcut", "All other platforms"),
    ("QAbstractFileIconProvider", "Unknown", None),
)


def _qt_strings() -> None:  # pragma: no cover - read by lupdate, never run
    translate = QCoreApplication.translate
    translate("QFileDialog", "&Look in:")
    translate("QFileDialog", "Files of &type:")
    translate("QAbstractFileIconProvider", "Drive")
    translate("QAbstractFileIconProvider", "Folder", "All other platforms")
    translate("QAbstractFileIconProvider", "Shortcut", "All other platforms")
    translate("QAbstractFileIconProvider", "Unknown")

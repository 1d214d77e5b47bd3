"""Where the window's file dialogs open: the person's Documents folder (or home), then the
folder last used.

A `QFileDialog` given no folder, or one that does not exist, opens in the process's working
folder: under ``make run`` that is the source checkout, a place nobody keeps an export in.
Every file dialog of the window (File › Export…, Import…, Back up…, Restore…, Settings ›
Tools' Import from a file…, a preset's folder, a server's working folder) asks `start_folder`
where to open, and tells `remember` what was chosen, so the next one, whichever it is, opens
where the person was last. The last folder lasts as long as the app runs.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["documents_folder", "remember", "start_folder"]

_LAST: list[Path] = []  # the folder of the last file (or the last folder) chosen


def documents_folder() -> Path:
    """The person's Documents folder when it exists, else their home folder."""
    from PySide6.QtCore import QStandardPaths

    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return Path(documents)
    return Path.home()


def start_folder() -> Path:
    """Where a file dialog opens: the folder last used while it still exists, else
    `documents_folder`."""
    if _LAST and _LAST[0].is_dir():
        return _LAST[0]
    return documents_folder()


def remember(chosen: str | Path, *, folder: bool = False) -> None:
    """A file (or, with ``folder``, a folder) was chosen: the next dialog opens there."""
    if not chosen:
        return
    path = Path(chosen)
    _LAST[:] = [path if folder else path.parent]

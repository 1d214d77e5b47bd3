"""The File menu's archive actions: Export…, Import…, Back up… and Restore….

Each flow is its own module and is given only what it needs (the store, the open
conversation, reading the list again, replacing the store) by `ArchiveActions`, which owns the
four menu actions and runs one flow at a time:

- `actions`: `ArchiveActions`, the menu actions, one flow at a time;
- `export_flow`, `import_flow`, `backup_flow`, `restore_flow`: the four flows;
- `_shared`: what the window gives (`ArchiveHost`), the file, progress and report dialogs
  every flow shows (`ArchiveUI`, `ProgressDialog`), `Action` and `Outcome`;
- `host`: `WindowArchiveHost`, the `ArchiveHost` over the window's controller.

The engine does the work on its own threads (`engine.export_conversations`,
`engine.import_file`, `engine.storage.backup`); nothing here reads or writes a file on the
GUI thread. Built with the window's widgets, before the engine loads: the engine and asyncio
are imported when an action first runs.
"""

from ._shared import Action, ArchiveHost, ArchiveUI, Outcome, ProgressDialog
from .actions import ArchiveActions
from .backup_flow import backup_file_name
from .export_flow import ExportDialog

__all__ = [
    "Action",
    "ArchiveActions",
    "ArchiveHost",
    "ArchiveUI",
    "ExportDialog",
    "Outcome",
    "ProgressDialog",
    "backup_file_name",
]

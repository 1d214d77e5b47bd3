"""The data folder, created private before anything else loads.

`make_private_folder` lives apart from `ui.settings.store` (which imports asyncio, about 50 ms)
because `ui.app.main` creates the data folder before the window's first paint.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["make_private_folder"]


def make_private_folder(folder: Path) -> None:
    """Create `folder` and any missing parents as 0700, whatever the umask.

    The rule of ``engine.storage.files.make_private_folder``, repeated here so the window can
    create its data folder before the engine is imported. An existing folder is left as it
    is (the person may have chosen a shared one on purpose).

    Raises:
        OSError: the folder could not be created.
    """
    missing: list[Path] = []
    for ancestor in (folder, *folder.parents):
        if ancestor.exists():
            break
        missing.append(ancestor)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for created in missing:
        os.chmod(created, 0o700)  # mkdir's mode is filtered by the umask; chmod's is not

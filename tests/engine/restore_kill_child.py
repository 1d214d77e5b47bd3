"""A restore in a child process that stops just before its final rename, to be SIGKILLed there.

Usage: ``python -m tests.engine.restore_kill_child DATA BACKUP``. The child runs
`restore_database`; when it is about to rename the checked copy of the backup onto ``DATA``
it prints ``renaming`` (flushed) and waits to be killed, so the parent sees the files exactly
as a kill at that instant leaves them.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from engine.storage import backup


def main() -> None:
    data, source = Path(sys.argv[1]), Path(sys.argv[2])
    real_replace = os.replace

    def replace(src: os.PathLike[str] | str, dst: os.PathLike[str] | str) -> None:
        if Path(dst) == data:
            print("renaming", flush=True)
            threading.Event().wait()  # the parent kills this process here
        real_replace(src, dst)

    backup.os.replace = replace  # type: ignore[assignment]
    backup.restore_database(data, source)


if __name__ == "__main__":
    main()

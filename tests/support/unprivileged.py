"""Running a child as `nobody`, for the tests of refusals only a real unprivileged user sees.

As root, permission bits do not stop anyone, so the tests that check "read-only" and
"permission denied" run their child through ``setpriv`` (util-linux), which drops the uid,
gid, groups and capabilities. That child must still reach the interpreter and the checkout:
a fresh clone may sit in a folder only root may enter (``mktemp -d`` makes it 0700), so
`reachable_by_nobody` lets the child pass through the folders above them (search only, never
listing) while it runs, then gives them their modes back.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534
#: the command prefix that runs a child as `nobody` (empty when not root: already unprivileged)
DROP = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if AS_ROOT else []
CHECKOUT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def reachable_by_nobody() -> Iterator[None]:
    """Let `nobody` pass through the folders above the interpreter and the checkout."""
    if not AS_ROOT:
        yield
        return
    ends = (Path(sys.executable), Path(sys.executable).resolve(), CHECKOUT)
    folders = {folder for end in ends for folder in end.parents}
    opened = [(f, f.stat().st_mode) for f in sorted(folders) if not f.stat().st_mode & 0o001]
    for folder, mode in opened:
        os.chmod(folder, mode | 0o001)
    try:
        yield
    finally:
        for folder, mode in opened:
            os.chmod(folder, mode)

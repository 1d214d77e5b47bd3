"""The real reader child (`engine.attach._worker.main`, its limits included) with three more
operations a hostile file could cause, for tests/engine/test_attach_documents.py:

* ``hang``: never answers (a parser in an endless loop);
* ``hog``: allocates without end (a parser asking for ever more memory);
* ``crash``: dies by SIGSEGV (a parser's native code crashing).

Run as ``python tests/engine/attach_child.py --memory N --cpu S``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.attach import _worker  # noqa: E402


def hang(data: bytes, options: dict[str, Any]) -> _worker.Result:
    while True:
        time.sleep(3600)


def hog(data: bytes, options: dict[str, Any]) -> _worker.Result:
    kept = []
    while True:
        kept.append(bytearray(64 * 1024 * 1024))


def crash(data: bytes, options: dict[str, Any]) -> _worker.Result:
    os.kill(os.getpid(), signal.SIGSEGV)
    raise AssertionError("unreachable")


if __name__ == "__main__":
    _worker.OPS.update(hang=hang, hog=hog, crash=crash)
    sys.exit(_worker.main())

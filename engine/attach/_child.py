"""Running the reader child (`engine.attach._worker`) with a time and a memory limit.

The parent never parses an untrusted file itself: it starts one child per file, writes it the
request and the bytes, and reads one answer. The child limits its own address space and
processor time before it imports a parser; the parent kills it (SIGKILL) when it has not
answered within the timeout, and when the caller's task is cancelled — so a parser that
hangs, crashes or allocates without end never takes the caller with it, and never outlives
the request. Every way a child can end is an `AttachmentError` with its own sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AttachmentError, size_phrase
from ..sentences import has_sentence
from ._worker import WORKER_FLAG

__all__ = ["ChildLimits", "run_child", "worker_command"]

#: the largest answer read back from a child (a re-encoded picture is a few MB; a document's
#: text is at most a few times its file)
_MAX_ANSWER = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ChildLimits:
    """How long and how much memory the child reading one file may take."""

    timeout: float = 60.0  #: seconds until the child is killed
    memory: int = 1536 * 1024 * 1024  #: bytes of address space (``RLIMIT_AS``; not on Windows)
    #: the command that starts the child (None: this interpreter, or the bundle, running
    #: `engine.attach._worker`); tests give their own child here
    command: Sequence[str] | None = None


def worker_command() -> list[str]:
    """The command starting the reader child: the bundle's own executable with
    `WORKER_FLAG` (packaging/launch.py hands over to the worker), or this interpreter
    running the worker's file in isolated mode (no engine import: a fast start)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_FLAG]
    return [sys.executable, "-I", str(Path(__file__).with_name("_worker.py"))]


async def run_child(
    op: str,
    data: bytes,
    options: Mapping[str, Any],
    *,
    path: str,
    limits: ChildLimits,
) -> tuple[dict[str, Any], bytes]:
    """Have a child do ``op`` on ``data``; its answer's header and bytes.

    Raises:
        AttachmentError: the child refused the file (the sentence it chose), ran out of
            time (``attach.timeout``) or memory (``attach.out_of_memory``), or died
            (``attach.crashed``).
        asyncio.CancelledError: the caller was cancelled; the child was killed first.
    """
    command = [
        *(limits.command or worker_command()),
        "--memory",
        str(limits.memory),
        "--cpu",
        str(int(limits.timeout) + 2),
    ]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=_MAX_ANSWER,
        start_new_session=True,  # a Ctrl+C in a terminal reaches the app, not the child
    )
    request = json.dumps({"op": op, "options": dict(options)}).encode() + b"\n"
    try:
        output, _ = await asyncio.wait_for(process.communicate(request + data), limits.timeout)
    except TimeoutError:
        await _kill(process)
        raise AttachmentError(
            path, key="attach.timeout", params={"seconds": f"{limits.timeout:g}"}
        ) from None
    except BaseException:  # cancelled (or the pipe broke): the child never outlives the call
        await _kill(process)
        raise
    header_line, _, payload = output.partition(b"\n")
    try:
        header = json.loads(header_line) if header_line else None
    except ValueError:
        header = None
    if not isinstance(header, dict):
        raise AttachmentError(
            path, key="attach.crashed", params={"detail": _ending(process.returncode)}
        )
    error = header.get("error")
    if isinstance(error, str):
        given = header.get("params")
        params: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
        if error == "attach.out_of_memory":
            params = {"limit": size_phrase(limits.memory)}
        elif error == "attach.over_budget":
            params = {"limit": size_phrase(int(params.get("limit", 0)))}
        elif error == "attach.unpacks_too_large":
            params = {k: size_phrase(int(params.get(k, 0))) for k in ("size", "limit")}
        raise _refused(path, error, params)
    return header, payload


def _refused(path: str, key: str, params: Mapping[str, Any]) -> AttachmentError:
    """Raise the child's refusal as the engine's error (a key the catalog does not know, or
    parameters that do not fit it, read as a crash: the child is never trusted blindly)."""
    try:
        if not (key.startswith("attach.") and has_sentence(key)):
            raise KeyError(key)
        return AttachmentError(path, key=key, params={k: str(v) for k, v in params.items()})
    except (KeyError, ValueError, IndexError):
        return AttachmentError(path, key="attach.crashed", params={"detail": key[:80]})


async def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the child (TerminateProcess on Windows) and reap it (shielded: a second
    cancel cannot leave it running)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())


def _ending(returncode: int | None) -> str:
    """How a child ended, in a few words for the sentence's detail."""
    if returncode is not None and returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"

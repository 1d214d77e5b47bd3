"""A JSON object file kept safe, and the keychain beside it: what settings.json and mcp.json share.

`JsonObjectFile` owns one file's mechanics; the stores (`ui.settings.store.SettingsStore`,
`ui.settings.mcp_file.MCPFile`) own what it holds and how its problems are worded (`FileWords`).
Invariants:

- Reading gives the file's JSON object, or None when there is no file. A file that is not
  UTF-8, not JSON, not an object, cannot be read, or that the store's own ``check`` refuses,
  is refused with the store's error, and the refusal is remembered: every later write raises
  it, the file left exactly as it was, until `JsonObjectFile.move_aside` (only when the person
  agreed) renames it to ``<name>.broken-<UTC time>``, never over an earlier one.
- A write is atomic: a temp file beside the target (mkstemp creates it 0600, so a secret in
  it is never readable by others, not even for a moment), fsync, ``os.replace``, then an fsync
  of the folder so the rename itself survives a power cut. A crash leaves the old file or the
  new one, never half of either.
- A file that is a symbolic link is written through: the temp file goes beside the link's
  target and replaces it, so the link stays a link (into a dotfiles repository, say). A target
  that cannot be written (a folder, in a missing folder, a folder that takes no new file) is
  refused (`UnwritableLink`), the link left as it was.
- Read-change-write runs under one lock per file, in a worker thread: never on the GUI thread.
- The data folder, when created here, is 0700 whatever the umask (`make_private_folder`).

`Keychain` is one keyring service: whether a real backend exists (keyring's ``fail`` and
``null`` backends, or a chainer with nothing to chain, are none), and get/set/delete, either
blocking (for work already in a worker thread) or awaited (run in ``asyncio.to_thread``,
because a backend may talk to D-Bus or prompt). Values cross threads wrapped in `Secret`, as
executors (qasync's at DEBUG level) log what they run and return.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .folders import make_private_folder

__all__ = [
    "FileWords",
    "JsonObjectFile",
    "Keychain",
    "LinkProblem",
    "ReadProblem",
    "Secret",
    "Unreadable",
    "UnwritableLink",
    "keyring_usable",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------- problems


class ReadProblem(StrEnum):
    """Why a file is not a usable JSON object."""

    NOT_TEXT = "not_text"  # not UTF-8 (`Unreadable.detail`: the decoder's reason)
    NOT_JSON = "not_json"  # detail: the parser's message, `Unreadable.line` where
    NOT_OBJECT = "not_object"  # JSON, but not an object
    CANNOT_READ = "cannot_read"  # the system refused to read it (detail: its reason)
    CONTENT = "content"  # the store's own check refused it (detail: the store's words)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A refused read, for the store to word (`FileWords.unreadable`)."""

    problem: ReadProblem
    detail: str = ""
    line: int = 0


class LinkProblem(StrEnum):
    """Why the file a link points at cannot be written."""

    FOLDER = "folder"  # the link points at a folder
    NO_FOLDER = "no_folder"  # the target's folder does not exist
    REFUSED = "refused"  # the target's folder takes no new file (detail: the reason)


@dataclass(frozen=True, slots=True)
class UnwritableLink:
    """A refused write through a link, for the store to word (`FileWords.unwritable_link`)."""

    path: Path  # the link
    target: Path  # where it points
    problem: LinkProblem
    detail: str = ""


class FileWords(Protocol):
    """How a store words its file's problems: the errors `JsonObjectFile` raises."""

    def unreadable(self, path: Path, why: Unreadable) -> Exception:
        """The error refusing ``path``; remembered, and raised again by every write."""
        ...

    def unwritable_link(self, why: UnwritableLink) -> Exception:
        """The error for a link whose target cannot be written."""
        ...

    def unwritable(self, path: Path, error: OSError) -> Exception:
        """The error for a write the system refused (the file is unchanged)."""
        ...


def _no_check(_raw: dict[str, Any]) -> str | None:
    return None


# ---------------------------------------------------------------------------- the file


class JsonObjectFile:
    """One JSON object file (see the module docstring).

    Args:
        path: the file (created, with its folder, on the first write).
        words: the store's errors.
        check: the store's own look at a read object: None when it is usable, else what is
            wrong with it (refused as `ReadProblem.CONTENT`). Runs in the worker thread.
        temp_prefix: the temp file's name starts with it (``.settings-``), so a stray one
            left by a killed process says whose it is.
        sort_keys: write the keys sorted (else in the order held: a file other apps share
            keeps its order).
    """

    def __init__(
        self,
        path: Path,
        *,
        words: FileWords,
        check: Callable[[dict[str, Any]], str | None] = _no_check,
        temp_prefix: str,
        sort_keys: bool = False,
    ) -> None:
        self.path = path
        self._words = words
        self._check = check
        self._temp_prefix = temp_prefix
        self._sort_keys = sort_keys
        self._refused: Exception | None = None
        self._lock = asyncio.Lock()

    @property
    def refused(self) -> Exception | None:
        """The error that refused the file (every write raises it), or None."""
        return self._refused

    # -------------------------------------------------------------- reading

    def read(self) -> dict[str, Any] | None:
        """The file's object, None when there is no file (blocking: a worker thread's).

        Raises:
            Exception: the store's `FileWords.unreadable` error; remembered as `refused`.
        """
        why: Unreadable | None = None
        raw: Any = None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            why = Unreadable(ReadProblem.NOT_TEXT, exc.reason)
        except OSError as exc:
            why = Unreadable(ReadProblem.CANNOT_READ, exc.strerror or type(exc).__name__)
        else:
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                why = Unreadable(ReadProblem.NOT_JSON, exc.msg, exc.lineno)
            else:
                if not isinstance(raw, dict):
                    why = Unreadable(ReadProblem.NOT_OBJECT)
                elif (detail := self._check(raw)) is not None:
                    why = Unreadable(ReadProblem.CONTENT, detail)
        if why is not None:
            self._refused = self._words.unreadable(self.path, why)
            raise self._refused
        return raw  # type: ignore[no-any-return]  # a dict, checked above

    async def load(self, convert: Callable[[dict[str, Any] | None], T]) -> T:
        """Read the file and ``convert`` its object, both in a worker thread.

        What crosses back to the loop is what ``convert`` returns: make it hold no secret.
        A read that succeeds forgets an earlier refusal (the file was mended meanwhile).

        Raises:
            Exception: the store's `FileWords.unreadable` error; remembered as `refused`.
        """
        result = await asyncio.to_thread(lambda: convert(self.read()))
        self._refused = None
        return result

    # -------------------------------------------------------------- writing

    async def update(
        self,
        change: Callable[[dict[str, Any]], T],
        *,
        written: Callable[[T], None] | None = None,
    ) -> T:
        """Read the object (``{}`` without a file), ``change`` it in place, write it back.

        All in one worker thread, under the file's lock. ``written`` runs there after a
        successful write, with what ``change`` returned (to forget what the old file held).

        Raises:
            Exception: the remembered refusal, or the store's error for a file refused now,
                a link that cannot be written through, or a write the system refused.
        """
        async with self._lock:
            if self._refused is not None:
                raise self._refused

            def work() -> T:
                raw = self.read() or {}
                result = change(raw)
                self.write(raw)
                if written is not None:
                    written(result)
                return result

            return await asyncio.to_thread(work)

    def write(self, raw: Mapping[str, Any]) -> None:
        """Write ``raw`` atomically, 0600, through a link (blocking: a worker thread's).

        Raises:
            Exception: the store's `FileWords.unwritable_link` or `FileWords.unwritable`.
        """
        text = json.dumps(raw, indent=2, ensure_ascii=False, sort_keys=self._sort_keys) + "\n"
        try:
            make_private_folder(self.path.parent)
        except OSError as exc:
            raise self._words.unwritable(self.path, exc) from None
        target = self._target()
        try:
            fd, tmp = tempfile.mkstemp(prefix=self._temp_prefix, suffix=".tmp", dir=target.parent)
        except OSError as exc:
            if target == self.path:
                raise self._words.unwritable(self.path, exc) from None
            why = UnwritableLink(
                self.path, target, LinkProblem.REFUSED, exc.strerror or type(exc).__name__
            )
            raise self._words.unwritable_link(why) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, target)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise self._words.unwritable(self.path, exc) from None
            raise
        _fsync_folder(target.parent)

    def _target(self) -> Path:
        """The file a write replaces: the path, or where its link points.

        Replacing the link itself would silently turn it into a regular file, cutting it from
        the file the person keeps elsewhere.
        """
        if not self.path.is_symlink():
            return self.path
        target = Path(os.path.realpath(self.path))
        if target.is_dir():
            raise self._words.unwritable_link(UnwritableLink(self.path, target, LinkProblem.FOLDER))
        if not target.parent.is_dir():
            raise self._words.unwritable_link(
                UnwritableLink(self.path, target, LinkProblem.NO_FOLDER)
            )
        return target

    async def move_aside(self) -> Path | None:
        """Rename the file to ``<name>.broken-<UTC time>`` and forget its refusal.

        Only when the person agreed. Returns the new path, or None if there was no file.
        """

        def move() -> Path | None:
            if not self.path.exists():
                return None
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
            target = self.path.with_name(f"{self.path.name}.broken-{stamp}")
            n = 1
            while target.exists():
                target = self.path.with_name(f"{self.path.name}.broken-{stamp}-{n}")
                n += 1
            os.replace(self.path, target)
            return target

        async with self._lock:
            moved = await asyncio.to_thread(move)
            self._refused = None
        return moved


def _fsync_folder(path: Path) -> None:
    """Make a rename in ``path`` durable (POSIX); a no-op where folders cannot be opened."""
    if os.name != "posix":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems take no fsync of a folder; the rename is done all the same
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- keychain


class Secret:
    """A string that never shows itself: repr and str are ``Secret('***')``.

    Keys cross thread boundaries wrapped in this, because executors (qasync's at DEBUG
    level) log the arguments and results of what they run.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """Return the secret itself; only for the request that needs it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def keyring_usable() -> bool:
    """True when keyring has a backend that really stores secrets (blocking: ~100 ms)."""
    try:
        import keyring
        from keyring.backends import chainer, fail, null
    except ImportError:  # keyring is a dependency, but a trimmed bundle may lack it
        return False
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        return False
    # The chainer with nothing to chain is keyring's way of saying "no keychain here".
    return not (isinstance(backend, chainer.ChainerBackend) and not backend.backends)


class Keychain:
    """The entries of one keyring service, by account name.

    Args:
        service: keyring's "service" every entry is filed under.
        use: True/False to force whether a keychain is there; None (default) finds out
            (`detect`) whether keyring has a real backend.

    The blocking calls raise what the backend raises; the store words it (never with the
    value: a backend may echo it).
    """

    def __init__(self, service: str, *, use: bool | None = None) -> None:
        self.service = service
        self._usable = use

    def __repr__(self) -> str:
        return f"Keychain({self.service!r}, usable={self._usable})"

    @property
    def known(self) -> bool | None:
        """Whether a keychain is there; None until `detect` has found out."""
        return self._usable

    async def detect(self) -> bool:
        """Whether a keychain is there, found out once (in a worker thread)."""
        if self._usable is None:
            self._usable = await asyncio.to_thread(keyring_usable)
        return self._usable

    # -------------------------------------------------------------- blocking

    def get(self, account: str) -> Secret | None:
        """The value filed under ``account``, or None (blocking)."""
        import keyring

        value = keyring.get_password(self.service, account)
        return Secret(value) if value else None

    def set(self, account: str, secret: Secret) -> None:
        """File ``secret`` under ``account`` (blocking)."""
        import keyring

        keyring.set_password(self.service, account, secret.reveal())

    def delete(self, account: str) -> None:
        """Forget ``account``'s value (blocking; raises when there is none)."""
        import keyring

        keyring.delete_password(self.service, account)

    # -------------------------------------------------------------- awaited

    async def read(self, account: str) -> Secret | None:
        """`get`, in a worker thread."""
        return await asyncio.to_thread(self.get, account)

    async def write(self, account: str, secret: Secret) -> None:
        """`set`, in a worker thread."""
        await asyncio.to_thread(self.set, account, secret)

    async def forget(self, account: str) -> None:
        """`delete`, in a worker thread."""
        await asyncio.to_thread(self.delete, account)

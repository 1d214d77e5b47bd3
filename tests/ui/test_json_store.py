"""`ui.common.json_store`: the one JSON file store and keychain settings.json and mcp.json share.

Real files in a temporary folder; the keychain is `DictKeyring` (tests/ui/conftest.py), a real
keyring backend keeping secrets in memory, here recording which thread each call came from.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest

from tests.ui.conftest import DictKeyring
from ui.common.json_store import (
    JsonObjectFile,
    Keychain,
    LinkProblem,
    ReadProblem,
    Secret,
    Unreadable,
    UnwritableLink,
)

SECRET = "sk-store-0123456789-NEVER-SHOWN"


class Refused(Exception):
    def __init__(self, path: Path, why: Unreadable) -> None:
        super().__init__(f"{path}: {why.problem} {why.detail}")
        self.why = why


class LinkRefused(Exception):
    def __init__(self, why: UnwritableLink) -> None:
        super().__init__(f"{why.path} -> {why.target}: {why.problem}")
        self.why = why


class WriteFailed(Exception):
    pass


class Words:
    def unreadable(self, path: Path, why: Unreadable) -> Exception:
        return Refused(path, why)

    def unwritable_link(self, why: UnwritableLink) -> Exception:
        return LinkRefused(why)

    def unwritable(self, path: Path, error: OSError) -> Exception:
        return WriteFailed(str(error))


def _no_version_two(raw: dict[str, Any]) -> str | None:
    return "from a newer version" if raw.get("version") == 2 else None


def store(path: Path) -> JsonObjectFile:
    return JsonObjectFile(path, words=Words(), check=_no_version_two, temp_prefix=".test-")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe not text", ReadProblem.NOT_TEXT),
        (b'{"cut off": ', ReadProblem.NOT_JSON),
        (b"[1, 2, 3]", ReadProblem.NOT_OBJECT),
        (b'{"version": 2}', ReadProblem.CONTENT),
    ],
)
async def test_a_damaged_file_is_refused_and_moved_aside_never_overwritten(
    tmp_path: Path, content: bytes, problem: ReadProblem
) -> None:
    path = tmp_path / "kept.json"
    path.write_bytes(content)
    file = store(path)
    with pytest.raises(Refused) as refused:
        await file.load(lambda raw: raw)
    assert refused.value.why.problem is problem
    assert file.refused is refused.value
    # Every write raises the refusal, and the file is exactly as it was.
    with pytest.raises(Refused) as again:
        await file.update(lambda raw: raw.update(x=1))
    assert again.value is refused.value
    assert path.read_bytes() == content

    moved = await file.move_aside()
    assert moved is not None and moved.name.startswith("kept.json.broken-")
    assert moved.read_bytes() == content and not path.exists()
    assert file.refused is None
    # A second damaged file moved aside (the same second) does not replace the first.
    path.write_bytes(content)
    with pytest.raises(Refused):
        await file.load(lambda raw: raw)
    second = await file.move_aside()
    assert second is not None and second != moved
    assert moved.read_bytes() == content and second.read_bytes() == content

    await file.update(lambda raw: raw.update(mended=True))
    assert json.loads(path.read_text(encoding="utf-8")) == {"mended": True}
    assert await store(tmp_path / "nothing.json").move_aside() is None


async def test_a_mended_file_is_read_again_and_writable(tmp_path: Path) -> None:
    path = tmp_path / "kept.json"
    path.write_text("{not json", encoding="utf-8")
    file = store(path)
    with pytest.raises(Refused):
        await file.load(lambda raw: raw)
    path.write_text('{"fixed": "by hand"}', encoding="utf-8")
    assert await file.load(lambda raw: raw) == {"fixed": "by hand"}
    await file.update(lambda raw: raw.update(more=1))
    assert json.loads(path.read_text(encoding="utf-8")) == {"fixed": "by hand", "more": 1}


@pytest.mark.usefixtures("umask_022")
async def test_a_write_replaces_the_file_whole_in_a_private_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "data" / "kept.json"
    file = store(path)
    assert await file.load(lambda raw: raw) is None  # no file: nothing, nothing written
    assert not path.parent.exists()
    await file.update(lambda raw: raw.update(first=1, unknown={"kept": [1, 2]}))
    assert mode(path) == 0o600
    assert mode(tmp_path / "new" / "data") == 0o700 and mode(tmp_path / "new") == 0o700

    # A second name for the old file: a write that replaces the file leaves it as it was
    # (a write into the file itself would show through it, half-done after a crash).
    before = path.read_bytes()
    os.link(path, tmp_path / "old.json")
    await file.update(lambda raw: raw.update(second=2))
    assert (tmp_path / "old.json").read_bytes() == before
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "first": 1,
        "unknown": {"kept": [1, 2]},
        "second": 2,
    }
    assert mode(path) == 0o600

    # A change that fails writes nothing and leaves no temp file.
    def fail(raw: dict[str, Any]) -> None:
        raw["third"] = 3
        raise RuntimeError("the change failed")

    current = path.read_bytes()
    with pytest.raises(RuntimeError):
        await file.update(fail)
    assert path.read_bytes() == current
    assert sorted(p.name for p in path.parent.iterdir()) == ["kept.json"]


async def test_updates_are_serialised_and_none_is_lost(tmp_path: Path) -> None:
    file = store(tmp_path / "kept.json")

    def count(raw: dict[str, Any]) -> None:
        raw["count"] = raw.get("count", 0) + 1

    await asyncio.gather(*(file.update(count) for _ in range(20)))
    assert json.loads((tmp_path / "kept.json").read_text(encoding="utf-8")) == {"count": 20}


async def test_keys_keep_their_order_or_are_sorted_as_the_store_asks(tmp_path: Path) -> None:
    ordered = store(tmp_path / "ordered.json")
    await ordered.update(lambda raw: raw.update(zebra=1, apple=2))
    assert list(json.loads((tmp_path / "ordered.json").read_text())) == ["zebra", "apple"]
    path = tmp_path / "sorted.json"
    sorted_file = JsonObjectFile(path, words=Words(), temp_prefix=".t-", sort_keys=True)
    await sorted_file.update(lambda raw: raw.update(zebra=1, apple=2))
    assert list(json.loads(path.read_text())) == ["apple", "zebra"]


async def test_a_linked_file_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "real.json").write_text('{"theme": "dark"}', encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    link = data / "kept.json"
    link.symlink_to(dotfiles / "real.json")
    file = store(link)
    assert await file.load(lambda raw: raw) == {"theme": "dark"}
    await file.update(lambda raw: raw.update(language="zh_CN"))
    assert link.is_symlink() and os.readlink(link) == str(dotfiles / "real.json")
    written = json.loads((dotfiles / "real.json").read_text(encoding="utf-8"))
    assert written == {"theme": "dark", "language": "zh_CN"}
    assert mode(dotfiles / "real.json") == 0o600
    assert sorted(p.name for p in dotfiles.iterdir()) == ["real.json"]  # no temp file left


@pytest.mark.parametrize("problem", [LinkProblem.FOLDER, LinkProblem.NO_FOLDER])
async def test_a_link_that_cannot_be_written_through_is_refused_and_kept(
    tmp_path: Path, problem: LinkProblem
) -> None:
    target = tmp_path / "a folder" if problem is LinkProblem.FOLDER else tmp_path / "gone" / "x"
    if problem is LinkProblem.FOLDER:
        target.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    link = data / "kept.json"
    link.symlink_to(target)
    file = store(link)
    with pytest.raises(LinkRefused) as refused:
        # (an update reads first: a link to a folder is refused as unreadable before this)
        await asyncio.to_thread(file.write, {"x": 1})
    assert refused.value.why == UnwritableLink(link, target, problem)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert sorted(p.name for p in data.iterdir()) == ["kept.json"]
    assert not (tmp_path / "gone").exists()


class ThreadKeyring(DictKeyring):
    """`DictKeyring` that notes the thread of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[threading.Thread] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.threads.append(threading.current_thread())
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self.threads.append(threading.current_thread())
        super().set_password(service, username, password)

    def delete_password(self, service: str, username: str) -> None:
        self.threads.append(threading.current_thread())
        super().delete_password(service, username)


@pytest.fixture
def thread_keyring() -> Iterator[ThreadKeyring]:
    previous = keyring.get_keyring()
    backend = ThreadKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


async def test_keychain_values_are_kept_off_the_gui_thread_and_out_of_sight(
    thread_keyring: ThreadKeyring,
) -> None:
    keys = Keychain("Continuo test")
    assert keys.known is None
    assert await keys.detect() is True and keys.known is True
    await keys.write("provider-1", Secret(SECRET))
    assert thread_keyring.secrets == {("Continuo test", "provider-1"): SECRET}
    value = await keys.read("provider-1")
    assert value is not None and value.reveal() == SECRET
    assert SECRET not in repr(value) + str(value) + repr(keys)
    await keys.forget("provider-1")
    assert thread_keyring.secrets == {}
    assert await keys.read("provider-1") is None
    with pytest.raises(keyring.errors.PasswordDeleteError):
        await keys.forget("provider-1")  # the caller decides whether "not there" matters
    assert len(thread_keyring.threads) == 5
    assert threading.main_thread() not in thread_keyring.threads


@pytest.mark.usefixtures("no_keyring")
async def test_without_a_real_backend_there_is_no_keychain() -> None:
    assert await Keychain("Continuo test").detect() is False
    forced = Keychain("Continuo test", use=True)
    assert forced.known is True and await forced.detect() is True

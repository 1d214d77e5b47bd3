"""The MCP servers the person set up: ``<data dir>/mcp.json`` and the secrets kept beside it.

Owns ``mcp.json``, written in the ``{"mcpServers": {name: {...}}}`` format Claude desktop,
Cursor and LM Studio use, so the file can be copied between apps as it is. The file's mechanics
are `ui.common.json_store.JsonObjectFile`'s and the keychain's `ui.common.json_store.Keychain`'s, shared with
``settings.json``. Invariants:

- Written atomically (temp file in the same folder, fsync, ``os.replace``, the folder
  fsynced), mode 0600; a ``mcp.json`` that is a symbolic link is written through to its
  target, the link kept.
- A file that cannot be used (not UTF-8, not JSON, not an object, a bad entry) is refused with
  `MCPFileError`, a sentence naming it, and is never written over: every later write raises
  until `move_aside()`.
- Keys this version does not know, at the top level and in each entry, are kept as they are;
  servers keep their order.
- A server that is switched off carries ``"disabled": true`` (Cline's and Cursor's
  convention); a switched-on one has no ``"disabled"`` key (a ``false`` found is kept).
- Everything that blocks (file I/O, keyring) runs in ``asyncio.to_thread``.

Secrets. A value of a server's ``env`` or ``headers`` may be kept in the OS keychain, like API
keys: keyring service ``"Continuo MCP"``, entry ``<server>:env:<NAME>`` or
``<server>:headers:<Name>``. In the file such a value is an empty text, and the entry lists it
under ``"continuoKeychain"``::

    "github": {"command": "npx", "args": [...],
               "env": {"GITHUB_TOKEN": ""},
               "continuoKeychain": ["env.GITHUB_TOKEN"]}

(other apps see an empty value and ignore the unknown key). `load_configs` fills the values in
from the keychain. Without a real keychain backend (keyring's ``fail``/``null``) nothing is
put in it: values stay in ``mcp.json`` (0600) and `MCPFile.keychain_available` is False so the
page can say so. No value of ``env`` or ``headers`` appears in a repr, a log line or an error.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from engine import MCPConfigError
from engine.mcp import MCPServerConfig, load_mcp_config

from ..common.json_store import (
    JsonObjectFile,
    Keychain,
    ReadProblem,
    Secret,
    Unreadable,
    UnwritableLink,
)
from .store import KeychainError, SettingsError

__all__ = [
    "KEYCHAIN_KEY",
    "KEYRING_SERVICE",
    "MCP_FILE_NAME",
    "MCPFile",
    "MCPFileError",
    "ServerEntry",
    "parse_servers",
    "unique_name",
]

log = logging.getLogger(__name__)

MCP_FILE_NAME = "mcp.json"
KEYRING_SERVICE = "Continuo MCP"
#: the entry's key listing which of its values are in the keychain ("env.NAME", "headers.Name")
KEYCHAIN_KEY = "continuoKeychain"
SECTIONS = ("env", "headers")


class MCPFileError(SettingsError):
    """mcp.json cannot be used; it was left exactly as it was (`.path`)."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(
            QCoreApplication.translate(
                "MCPFile",
                "The MCP server file {path} cannot be used ({detail}). It was not changed; "
                "fix it, or move it aside to start with no servers.",
            ).format(path=path, detail=detail)
        )


def _split_ref(ref: str) -> tuple[str, str] | None:
    section, dot, name = ref.partition(".")
    return (section, name) if dot and section in SECTIONS and name else None


def _account(server: str, ref: str) -> str:
    section, name = ref.split(".", 1)
    return f"{server}:{section}:{name}"


@dataclass(slots=True, eq=False)
class ServerEntry:
    """One server as the page edits it.

    Attributes:
        name: its key in ``mcpServers``.
        data: its JSON object as written to the file: unknown keys as found, ``"disabled"``,
            an empty text for each value held in the keychain (listed under ``KEYCHAIN_KEY``).
        pending: values to put in the keychain at the next save, by ``"env.NAME"`` /
            ``"headers.Name"``.
        origin: the name it was loaded under (None when new), so a renamed server's keychain
            values follow it.
    """

    name: str
    data: dict[str, Any]
    pending: dict[str, str] = field(default_factory=dict)
    origin: str | None = None

    def __repr__(self) -> str:  # its env, headers, args and URL may hold secrets
        return f"ServerEntry({self.name!r}, enabled={self.enabled})"

    @property
    def enabled(self) -> bool:
        return self.data.get("disabled") is not True

    @enabled.setter
    def enabled(self, value: bool) -> None:
        if value:
            if self.data.get("disabled") is True:
                del self.data["disabled"]
        else:
            self.data["disabled"] = True

    @property
    def is_http(self) -> bool:
        return "url" in self.data and "command" not in self.data

    @property
    def held(self) -> list[str]:
        """The refs (``"env.NAME"``) whose values are in the keychain, as the entry lists them."""
        refs = self.data.get(KEYCHAIN_KEY)
        if not isinstance(refs, list):
            return []
        return [r for r in refs if isinstance(r, str) and _split_ref(r) is not None]

    def copy(self) -> ServerEntry:
        return ServerEntry(self.name, copy.deepcopy(self.data), dict(self.pending), self.origin)

    def summary(self) -> str:
        """What it runs, without arguments, URL query or secrets: ``uvx`` / ``https://host``."""
        if self.is_http:
            url = str(self.data.get("url") or "")
            return url.split("?", 1)[0]
        return str(self.data.get("command") or "")

    def check(self) -> MCPServerConfig:
        """Validate with the engine's reader (keychain-held values stand in as ``"x"``).

        Raises:
            MCPConfigError: the entry is bad; the sentence names the server and field.
        """
        data = copy.deepcopy(self.data)
        for ref in self.held:
            section, name = ref.split(".", 1)
            values = data.get(section)
            if isinstance(values, dict) and values.get(name) == "":
                values[name] = "x"
        (config,) = load_mcp_config({"mcpServers": {self.name: data}})
        return config


def unique_name(name: str, taken: Sequence[str] | set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``... whichever is not taken."""
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"


def parse_servers(source: str | os.PathLike[str] | Mapping[str, Any]) -> list[ServerEntry]:
    """Read servers to import: ``{"mcpServers": …}`` or VS Code's ``{"servers": …}``.

    Every entry is checked by `engine.mcp.load_mcp_config` first; one bad entry refuses all.
    Values arrive as plain values (none in the keychain); blocking when given a path.

    Raises:
        MCPConfigError: the text or file is not such an object, or an entry is bad.
    """
    configs = load_mcp_config(source)  # raises with the server and field named
    if isinstance(source, Mapping):
        data: Any = source
    else:
        text = os.fspath(source)
        if not text.lstrip().startswith("{"):
            text = Path(text).read_text(encoding="utf-8-sig")
        data = json.loads(text)
    servers = data.get("mcpServers", data.get("servers"))
    entries = []
    for config in configs:
        entry = copy.deepcopy(dict(servers[config.name]))
        entry.pop(KEYCHAIN_KEY, None)  # another Continuo's keychain is not ours
        entries.append(ServerEntry(config.name, entry))
    return entries


class _Words:
    """How mcp.json's problems are said (`ui.common.json_store.FileWords`), in the window's language."""

    def unreadable(self, path: Path, why: Unreadable) -> Exception:
        if why.problem is ReadProblem.NOT_TEXT:
            detail = QCoreApplication.translate("MCPFile", "not UTF-8 text: {r}").format(
                r=why.detail
            )
        elif why.problem is ReadProblem.NOT_JSON:
            detail = QCoreApplication.translate(
                "MCPFile", "not valid JSON: {msg} at line {line}"
            ).format(msg=why.detail, line=why.line)
        elif why.problem is ReadProblem.NOT_OBJECT:
            detail = QCoreApplication.translate("MCPFile", "it does not hold a JSON object")
        else:
            detail = why.detail
        return MCPFileError(path, detail)

    def unwritable_link(self, why: UnwritableLink) -> Exception:
        return SettingsError(
            QCoreApplication.translate(
                "MCPFile",
                "The MCP server file {path} is a link to {target}, which cannot be written. "
                "The link was left as it is; fix or remove it, then save again.",
            ).format(path=why.path, target=why.target)
        )

    def unwritable(self, path: Path, error: OSError) -> Exception:
        return SettingsError(
            QCoreApplication.translate(
                "MCPFile",
                "Could not write the MCP server file {path} ({error}). It was not changed.",
            ).format(path=path, error=error.strerror or type(error).__name__)
        )


def _check(raw: dict[str, Any]) -> str | None:
    """What is wrong with an mcp.json object, every entry read by the engine; or None."""
    if "mcpServers" not in raw and "servers" not in raw:
        return None  # an object with no servers yet (they are added under "mcpServers")
    try:
        load_mcp_config(raw)
    except MCPConfigError as exc:
        if exc.field is None:
            return exc.problem
        return QCoreApplication.translate(
            "MCPFile", 'the server {server} has a bad "{field}": {problem}'
        ).format(server=repr(exc.server), field=exc.field, problem=exc.problem)
    return None


def _servers_of(raw: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if raw is None:
        return {}
    servers = raw.get("mcpServers", raw.get("servers"))
    return servers if isinstance(servers, Mapping) else {}


class MCPFile:
    """Reads and writes ``mcp.json`` and its keychain-held values for one data folder.

    Args:
        data_dir: the folder holding mcp.json (created on the first write).
        use_keychain: True/False to force the choice; None (default) uses the OS keychain
            when keyring has a real backend.
    """

    def __init__(
        self, data_dir: str | os.PathLike[str], *, use_keychain: bool | None = None
    ) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / MCP_FILE_NAME
        self._file = JsonObjectFile(self.path, words=_Words(), check=_check, temp_prefix=".mcp-")
        self._keys = Keychain(KEYRING_SERVICE, use=use_keychain)

    def __repr__(self) -> str:
        return f"MCPFile({str(self.data_dir)!r}, keychain_available={self._keys.known})"

    @property
    def keychain_available(self) -> bool:
        """True when held values go to the OS keychain. Known after `load_entries()`."""
        return bool(self._keys.known)

    @property
    def refused_error(self) -> MCPFileError | None:
        refused = self._file.refused
        return refused if isinstance(refused, MCPFileError) else None

    # -------------------------------------------------------------- reading

    async def load_entries(self) -> list[ServerEntry]:
        """The servers as the file has them (keychain values not read); none without a file.

        Raises:
            MCPFileError: the file exists but cannot be used; later writes are refused.
        """
        await self._keys.detect()

        def entries(raw: dict[str, Any] | None) -> list[ServerEntry]:
            # Entries, not the raw object, cross back: an executor may log what it returns,
            # and ServerEntry's repr holds no value.
            servers = _servers_of(raw)
            return [ServerEntry(name, dict(entry), origin=name) for name, entry in servers.items()]

        try:
            return await self._file.load(entries)
        except MCPFileError as exc:
            log.warning("MCP server file refused: %s", exc)
            raise

    async def load_configs(self, enabled_only: bool = True) -> tuple[MCPServerConfig, ...]:
        """The servers to run, with their keychain-held values filled in; none without a file.

        Raises:
            MCPFileError: the file cannot be used (a bad entry is named with its field).
            KeychainError: the keychain refused to give a value.
        """
        keychain = await self._keys.detect()

        def configs(raw: dict[str, Any] | None) -> tuple[MCPServerConfig, ...]:
            chosen: dict[str, Any] = {}
            for name, entry in _servers_of(raw).items():
                one = ServerEntry(name, copy.deepcopy(dict(entry)))
                if enabled_only and not one.enabled:
                    continue
                if keychain:
                    for ref in one.held:
                        section, key = ref.split(".", 1)
                        value = self._held(name, ref)
                        values = one.data.get(section)
                        if value is not None and isinstance(values, dict):
                            values[key] = value.reveal()
                        else:
                            log.warning(
                                "The keychain holds no value for %s of the MCP server %s",
                                ref,
                                name,
                            )
                chosen[name] = one.data
            return load_mcp_config({"mcpServers": chosen})

        return await self._file.load(configs)

    # -------------------------------------------------------------- writing

    async def save_entries(self, entries: Sequence[ServerEntry]) -> None:
        """Write ``entries`` as the servers (in order), keeping the file's unknown keys; put
        pending values in the keychain and forget the keychain values no entry holds any more.

        Raises:
            MCPFileError: the file on disk was refused and has not been moved aside.
            KeychainError: the keychain refused (the file is then not written).
            ValueError: two entries have the same name.
        """
        names = [e.name for e in entries]
        if len(set(names)) != len(names):
            raise ValueError("two MCP servers have the same name")
        keychain = await self._keys.detect()
        snapshot = [e.copy() for e in entries]

        def change(raw: dict[str, Any]) -> set[tuple[str, str]]:
            before = {
                (name, ref)
                for name, entry in _servers_of(raw).items()
                for ref in ServerEntry(name, dict(entry)).held
            }
            servers, after = self._resolve(snapshot, keychain)
            key = "servers" if "mcpServers" not in raw and "servers" in raw else "mcpServers"
            raw[key] = servers
            return before - after

        def forget(stale: set[tuple[str, str]]) -> None:
            for server, ref in stale:
                with contextlib.suppress(Exception):  # already gone is fine
                    self._keys.delete(_account(server, ref))

        await self._file.update(change, written=forget)
        for entry in entries:
            entry.pending.clear()
            entry.origin = entry.name
            if not keychain:
                entry.data.pop(KEYCHAIN_KEY, None)
        log.info("Saved %d MCP server(s) in %s", len(snapshot), self.path)

    def _resolve(
        self, entries: Sequence[ServerEntry], keychain: bool
    ) -> tuple[dict[str, Any], set[tuple[str, str]]]:
        """The ``mcpServers`` object to write, storing keychain values on the way (a thread)."""
        servers: dict[str, Any] = {}
        held: set[tuple[str, str]] = set()
        for entry in entries:
            data = copy.deepcopy(entry.data)
            refs = sorted(set(entry.held) | set(entry.pending))
            kept: list[str] = []
            for ref in refs:
                section, name = ref.split(".", 1)
                values = data.get(section)
                if not isinstance(values, dict):
                    values = data[section] = {}
                value = entry.pending.get(ref)
                if value is None and ref in entry.held and entry.origin not in (None, entry.name):
                    secret = self._held(entry.origin or "", ref) if keychain else None
                    value = secret.reveal() if secret is not None else None
                if not keychain:
                    if value is not None:
                        values[name] = value
                    continue
                if value is not None:
                    try:
                        self._keys.set(_account(entry.name, ref), Secret(value))
                    except Exception as exc:
                        raise KeychainError(
                            QCoreApplication.translate(
                                "MCPFile",
                                "Could not save the value of {what} of the MCP server {server} "
                                "in the system keychain ({error}). Unlock the keychain and try "
                                "again.",
                            ).format(
                                what=ref,
                                server=entry.name,
                                error=type(exc).__name__,
                            )
                        ) from None
                values[name] = ""
                kept.append(ref)
                held.add((entry.name, ref))
            if kept:
                data[KEYCHAIN_KEY] = kept
            else:
                data.pop(KEYCHAIN_KEY, None)
            servers[entry.name] = data
        return servers, held

    async def move_aside(self) -> Path | None:
        """Rename a refused mcp.json to ``mcp.json.broken-<time>``; only when the person agreed."""
        return await self._file.move_aside()

    # -------------------------------------------------------------- internals

    def _held(self, server: str, ref: str) -> Secret | None:
        """The keychain's value of ``ref`` of ``server`` (blocking: a worker thread's)."""
        try:
            return self._keys.get(_account(server, ref))
        except Exception as exc:
            raise KeychainError(
                QCoreApplication.translate(
                    "MCPFile",
                    "Could not read a value of the MCP server {server} from the system keychain "
                    "({error}). Unlock the keychain and try again.",
                ).format(server=server, error=type(exc).__name__)
            ) from None

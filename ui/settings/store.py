"""The user's settings and API keys: what they are, where they live, how they are kept safe.

Owns ``<data_dir>/settings.json`` and the API keys. The file's mechanics are
`ui.common.json_store.JsonObjectFile`'s (shared with ``mcp.json``); the keys' are
`ui.common.json_store.Keychain`'s. Invariants:

- The file is written atomically (a temp file in the same folder, fsync, ``os.replace``, the
  folder fsynced) with mode 0600, so a crash mid-write leaves either the old file or the new
  one, never half. A settings.json that is a symbolic link is written through: the temp file
  goes beside the link's target and replaces the target, so the link stays a link; a target
  that cannot be written is refused with `SettingsError`, the link left as it was.
- The data folder, when this module creates it, is 0700 whatever the umask.
- A file that cannot be read (bad JSON, wrong shape, a newer format) is refused with
  `SettingsFileError` naming it, and is never written over: the store remembers the refusal
  and every later write raises until the person agrees to `move_aside()`. The app can still
  start with `Settings()` defaults in memory.
- API keys live in the OS keychain (keyring) when a real backend exists — not keyring's
  ``fail``/``null`` backends. Otherwise they go into settings.json under ``"api_keys"`` (the
  file is 0600) and `SettingsStore.keychain_available` is False so the dialog can warn.
  `ProviderConfig` has no key field; nothing here puts a key in a log line, a repr or an
  error message (keys cross threads as `ui.common.json_store.Secret`).
- Everything that blocks (file I/O, keyring, which may talk to D-Bus or prompt) runs in
  ``asyncio.to_thread``, off the GUI thread.

File format (version 1)::

    {"version": 1, "providers": [{"id", "kind", "name", "base_url", "default_model",
     "key_in_keychain"}...], "default_provider_id": ..., "language": "system",
     "theme": "system", "last_session_id": ..., "window_geometry": "<base64>",
     "sidebar_width": <pixels>,
     "tool_approval": "ask" | "read_only",
     "always_allowed": [{"server": "<mcp server>", "tool": "<its tool's own name>"}...],
     "api_keys": {"<provider id>": "<key>"}}          # only without a keychain

Keys this version does not know are kept as they are when the file is rewritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..common.errors import KeychainError, SettingsError, SettingsFileError
from ..common.json_store import (
    JsonObjectFile,
    Keychain,
    LinkProblem,
    ReadProblem,
    Secret,
    Unreadable,
    UnwritableLink,
)

__all__ = [
    "DEFAULT_BASE_URLS",
    "KINDS",
    "LANGUAGES",
    "SETTINGS_FILE_NAME",
    "THEMES",
    "KeychainError",
    "ProviderConfig",
    "Settings",
    "SettingsError",
    "SettingsFileError",
    "SettingsStore",
    "ToolApproval",
    "new_provider_id",
    "with_key_location",
]

log = logging.getLogger(__name__)

SETTINGS_FILE_NAME = "settings.json"
SETTINGS_FORMAT_VERSION = 1
# The keyring "service" every key is filed under; the provider id is the "username".
KEYRING_SERVICE = "Continuo"

KINDS = ("openai", "anthropic", "ollama")
LANGUAGES = ("system", "en", "zh_CN")
THEMES = ("system", "light", "dark")


class ToolApproval(StrEnum):
    """When a tool of an MCP server asks to run (``"tool_approval"`` in the file)."""

    ASK = "ask"  #: before every call (the default)
    #: tools their server marks read-only (and nothing against it) run without asking;
    #: every other call still asks
    READ_ONLY = "read_only"


# Where each kind of endpoint usually lives. OpenAI's includes /v1 (as its SDK does);
# Anthropic's and Ollama's do not (DESIGN.md, Providers).
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434",
}


def new_provider_id() -> str:
    """Return a fresh provider id (also the keychain entry's name)."""
    return uuid.uuid4().hex


# ---------------------------------------------------------------------------- errors


# SettingsError, SettingsFileError, KeychainError: in `ui.common.errors` (the window's errors' tree,
# which words them), imported here where they are raised.


# ---------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """One configured endpoint. Holds no key: that is in the keychain or the 0600 file."""

    id: str
    kind: str  # "openai" (any OpenAI-compatible server), "anthropic" or "ollama"
    name: str  # what the person calls it, e.g. "OpenAI" or "Ollama on this computer"
    base_url: str  # OpenAI-compatible URLs include /v1; Anthropic's and Ollama's do not
    default_model: str = ""  # "" means "ask the server" (the first model it lists)
    key_in_keychain: bool = False  # True when its key is in the OS keychain

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Unknown provider kind {self.kind!r}; expected one of {KINDS}.")
        if not self.id:
            raise ValueError("A provider needs a non-empty id.")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProviderConfig:
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            name=str(data.get("name") or data["kind"]),
            base_url=str(data.get("base_url") or DEFAULT_BASE_URLS.get(str(data["kind"]), "")),
            default_model=str(data.get("default_model") or ""),
            key_in_keychain=bool(data.get("key_in_keychain", False)),
        )


@dataclass(slots=True)
class Settings:
    """Everything the person chose, as the app holds it in memory."""

    providers: list[ProviderConfig] = field(default_factory=list)
    default_provider_id: str | None = None
    language: str = "system"  # "system", "en" or "zh_CN"; applied when saved
    theme: str = "system"  # "system", "light" or "dark"
    last_session_id: str | None = None
    window_geometry: str | None = None  # QMainWindow.saveGeometry() as base64 text
    sidebar_width: int | None = None  # the conversation list's width the person chose
    tool_approval: ToolApproval = ToolApproval.ASK
    # (server, the server's own tool name) pairs the person chose "Always allow" for
    always_allowed: list[tuple[str, str]] = field(default_factory=list)

    def is_always_allowed(self, server: str, tool: str) -> bool:
        return (server, tool) in self.always_allowed

    def provider(self, provider_id: str | None) -> ProviderConfig | None:
        """Return the provider with this id, or None."""
        return next((p for p in self.providers if p.id == provider_id), None)

    def default_provider(self) -> ProviderConfig | None:
        """Return the default provider, else the first one, else None."""
        return self.provider(self.default_provider_id) or (
            self.providers[0] if self.providers else None
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SETTINGS_FORMAT_VERSION,
            "providers": [p.to_dict() for p in self.providers],
            "default_provider_id": self.default_provider_id,
            "language": self.language,
            "theme": self.theme,
            "last_session_id": self.last_session_id,
            "window_geometry": self.window_geometry,
            "sidebar_width": self.sidebar_width,
            "tool_approval": ToolApproval(self.tool_approval).value,
            "always_allowed": [{"server": s, "tool": t} for s, t in self.always_allowed],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Settings:
        language = data.get("language") or "system"
        theme = data.get("theme") or "system"
        approval = data.get("tool_approval")
        allowed: list[tuple[str, str]] = []
        for entry in data.get("always_allowed") or []:
            if isinstance(entry, Mapping) and entry.get("server") and entry.get("tool"):
                pair = (str(entry["server"]), str(entry["tool"]))
                if pair not in allowed:
                    allowed.append(pair)
        return cls(
            providers=[ProviderConfig.from_dict(p) for p in data.get("providers") or []],
            default_provider_id=data.get("default_provider_id"),
            language=language if language in LANGUAGES else "system",
            theme=theme if theme in THEMES else "system",
            last_session_id=data.get("last_session_id"),
            window_geometry=data.get("window_geometry"),
            sidebar_width=_width(data.get("sidebar_width")),
            tool_approval=(
                ToolApproval(approval)
                if approval in tuple(ToolApproval)
                else ToolApproval.ASK
            ),
            always_allowed=allowed,
        )


def _width(value: Any) -> int | None:
    """A width in pixels as settings.json holds it (anything else: none)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10_000:
        return value
    return None


def _scrub(text: str, secret: str | None) -> str:
    """Return ``text`` with ``secret`` blanked out, should a backend ever echo it."""
    return text.replace(secret, "***") if secret else text


class _Words:
    """How settings.json's problems are said (`ui.common.json_store.FileWords`)."""

    def unreadable(self, path: Path, why: Unreadable) -> Exception:
        detail = {
            ReadProblem.NOT_TEXT: f"not UTF-8 text: {why.detail}",
            ReadProblem.NOT_JSON: f"not valid JSON: {why.detail} at line {why.line}",
            ReadProblem.NOT_OBJECT: "it does not hold a JSON object",
        }.get(why.problem, why.detail)
        return SettingsFileError(path, detail)

    def unwritable_link(self, why: UnwritableLink) -> Exception:
        reason = {
            LinkProblem.FOLDER: "it is a folder",
            LinkProblem.NO_FOLDER: f"its folder {why.target.parent} does not exist",
        }.get(why.problem, why.detail)
        return SettingsError(
            f"The settings file {why.path} is a link to {why.target}, which cannot be written "
            f"({reason}). The link was left as it is; fix or remove it, then save again."
        )

    def unwritable(self, path: Path, error: OSError) -> Exception:
        return error


def _check(raw: dict[str, Any]) -> str | None:
    """What is wrong with a settings object this version cannot use, or None."""
    version = raw.get("version", SETTINGS_FORMAT_VERSION)
    if not isinstance(version, int) or version > SETTINGS_FORMAT_VERSION:
        return (
            f"it was written by a newer Continuo (format {version!r}, this version "
            f"reads up to {SETTINGS_FORMAT_VERSION}); update Continuo to use it"
        )
    if "providers" in raw and not isinstance(raw["providers"], list):
        return "'providers' is not a list"
    if "api_keys" in raw and not isinstance(raw["api_keys"], dict):
        return "'api_keys' is not an object"
    try:
        Settings.from_dict(raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"unexpected content: {exc}"
    return None


# ---------------------------------------------------------------------------- store


class SettingsStore:
    """Reads and writes settings.json and the API keys for one data folder.

    Args:
        data_dir: the folder holding settings.json (created on the first write).
        use_keychain: True/False to force the choice; None (default) uses the OS keychain
            when keyring has a real backend.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, use_keychain: bool | None = None):
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / SETTINGS_FILE_NAME
        self._file = JsonObjectFile(
            self.path, words=_Words(), check=_check, temp_prefix=".settings-", sort_keys=True
        )
        self._keys = Keychain(KEYRING_SERVICE, use=use_keychain)

    def __repr__(self) -> str:  # never the keys, not even the file-held ones
        return f"SettingsStore({str(self.data_dir)!r}, keychain_available={self._keys.known})"

    # -------------------------------------------------------------- properties

    @property
    def keychain_available(self) -> bool:
        """True when keys go to the OS keychain. Known after `load()` or any key call."""
        return bool(self._keys.known)

    @property
    def refused_error(self) -> SettingsFileError | None:
        """The error that made the store refuse the file, or None."""
        refused = self._file.refused
        return refused if isinstance(refused, SettingsFileError) else None

    # -------------------------------------------------------------- settings

    async def load(self, *, detect_keychain: bool = True) -> Settings:
        """Read the settings; a missing file gives the defaults.

        Args:
            detect_keychain: also find out whether an OS keychain exists (`keychain_available`).
                Loading keyring's backends takes about 100 ms, so start-up skips it; the
                first key read or write finds out anyway.

        Raises:
            SettingsFileError: the file exists but cannot be read. It is left untouched and
                later writes are refused until `move_aside()`.
        """
        if detect_keychain:
            await self._detect_keychain()
        try:
            # Settings, not the raw object, cross back: the file may hold keys.
            return await self._file.load(lambda raw: Settings.from_dict(raw or {}))
        except SettingsFileError as exc:
            log.warning("Settings file refused: %s", exc)
            raise

    async def save(self, settings: Settings) -> None:
        """Write ``settings`` atomically (0600), keeping file-held keys and unknown fields.

        Raises:
            SettingsFileError: the file on disk was refused and has not been moved aside.
        """

        def change(raw: dict[str, Any]) -> None:
            raw.update(settings.to_dict())
            # Drop file-held keys of providers that no longer exist.
            keys = raw.get("api_keys") or {}
            ids = {p.id for p in settings.providers}
            raw["api_keys"] = {k: v for k, v in keys.items() if k in ids}
            if not raw["api_keys"]:
                del raw["api_keys"]

        await self._update(change)

    async def move_aside(self) -> Path | None:
        """Rename a refused settings file to ``settings.json.broken-<time>`` and forget it.

        Only call this when the person agreed. Returns the new path, or None if there was
        no file.
        """
        moved = await self._file.move_aside()
        if moved:
            log.info("Moved the unreadable settings file aside to %s", moved)
        return moved

    # -------------------------------------------------------------- api keys

    async def get_api_key(self, provider_id: str) -> str | None:
        """Return the provider's key (keychain first, then the file), or None."""
        if await self._detect_keychain():
            try:
                secret = await self._keys.read(provider_id)
            except Exception as exc:
                raise KeychainError(
                    f"Could not read the API key from the system keychain "
                    f"({type(exc).__name__}: {exc}). Unlock the keychain and try again."
                ) from None
            if secret is not None:
                return secret.reveal()
        secret = await asyncio.to_thread(self._file_key, provider_id)
        return secret.reveal() if secret is not None else None

    async def set_api_key(self, provider_id: str, key: str) -> bool:
        """Store the provider's key; an empty key deletes it.

        Returns:
            True when the key went to the OS keychain, False when it went to settings.json
            (0600). Put this in `ProviderConfig.key_in_keychain`.

        Raises:
            KeychainError: the keychain refused (the key is then stored nowhere).
            SettingsFileError: the key belongs in a settings file that was refused.
        """
        if not key:
            await self.delete_api_key(provider_id)
            return False
        if await self._detect_keychain():
            try:
                await self._keys.write(provider_id, Secret(key))
            except Exception as exc:
                raise KeychainError(
                    "Could not save the API key in the system keychain "
                    f"({type(exc).__name__}: {_scrub(str(exc), key)}). "
                    "Unlock the keychain and try again."
                ) from None
            await self._drop_file_key(provider_id)
            log.info("Saved the API key for provider %s in the system keychain", provider_id)
            return True

        def change(raw: dict[str, Any]) -> None:
            keys = dict(raw.get("api_keys") or {})
            keys[provider_id] = key
            raw["api_keys"] = keys

        await self._update(change)
        log.info("Saved the API key for provider %s in %s (mode 0600)", provider_id, self.path)
        return False

    async def delete_api_key(self, provider_id: str) -> None:
        """Forget the provider's key wherever it is."""
        if await self._detect_keychain():
            with contextlib.suppress(Exception):  # nothing stored is fine
                await self._keys.forget(provider_id)
        await self._drop_file_key(provider_id)

    # -------------------------------------------------------------- models

    async def build_model(
        self,
        config: ProviderConfig,
        model_id: str | None = None,
        *,
        api_key: str | None = None,
        **options: Any,
    ) -> Any:
        """Return an engine provider adapter for ``config``.

        Args:
            config: the endpoint.
            model_id: the model to talk to; defaults to ``config.default_model``.
            api_key: use this key instead of the stored one (the dialog's Test connection
                tries a key before it is saved).
            **options: passed to the adapter (``timeout``, ``max_attempts``, ``transport``...).
        """
        from engine.providers import AnthropicModel, OllamaModel, OpenAIChatModel

        classes = {"openai": OpenAIChatModel, "anthropic": AnthropicModel, "ollama": OllamaModel}
        key = api_key if api_key else await self.get_api_key(config.id)
        # "" when no model is chosen yet: enough for list_models(), which names none.
        return classes[config.kind](
            model=model_id or config.default_model or "",
            base_url=config.base_url,
            api_key=key or None,
            **options,
        )

    # -------------------------------------------------------------- internals

    async def _detect_keychain(self) -> bool:
        known = self._keys.known is not None
        usable = await self._keys.detect()
        if not known and not usable:
            log.info("No system keychain found; API keys are kept in %s (0600)", self.path)
        return usable

    async def _drop_file_key(self, provider_id: str) -> None:
        if await asyncio.to_thread(self._file_key, provider_id) is None:
            return

        def change(raw: dict[str, Any]) -> None:
            keys = dict(raw.get("api_keys") or {})
            keys.pop(provider_id, None)
            if keys:
                raw["api_keys"] = keys
            else:
                raw.pop("api_keys", None)

        await self._update(change)

    async def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Read the file, apply ``change`` to its JSON object, write it back atomically."""

        def versioned(raw: dict[str, Any]) -> None:
            change(raw)
            raw["version"] = SETTINGS_FORMAT_VERSION

        await self._file.update(versioned)

    def _file_key(self, provider_id: str) -> Secret | None:
        """Return the file-held key, wrapped; an unreadable file holds no key."""
        try:
            raw = self._file.read() or {}
        except SettingsFileError:
            return None
        key = (raw.get("api_keys") or {}).get(provider_id)
        return Secret(str(key)) if key else None


def with_key_location(config: ProviderConfig, in_keychain: bool) -> ProviderConfig:
    """Return ``config`` recording where its key now lives."""
    return replace(config, key_in_keychain=in_keychain)

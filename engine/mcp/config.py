"""MCP server configurations: the ``{"mcpServers": {...}}`` format other clients already use.

Claude desktop, Cursor and LM Studio (``mcp.json``) all keep their servers as
``{"mcpServers": {name: {"command", "args", "env", "cwd"} | {"url", "headers"}}}``; VS Code
names the same object ``"servers"``. `load_mcp_config` reads either into frozen
`MCPServerConfig` values, keeps every key it does not know in ``extra`` (so a file written
back loses nothing), and refuses a bad entry with an `MCPConfigError` naming the server and
the field. Values of ``env`` and ``headers`` often are secrets: they never appear in a repr
or an error.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import MCPConfigError

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "MAX_LINE_BYTES",
    "MCPServerConfig",
    "MCPTransport",
    "load_mcp_config",
]

#: seconds a tool call may take unless its server's entry says ``"timeout"``
DEFAULT_CALL_TIMEOUT = 300.0
#: bytes one message (one line) from a stdio server may hold unless its entry says
#: ``"maxLineBytes"``: the 16 MiB a provider's stream event may (`engine.providers.sse`)
MAX_LINE_BYTES = 16 * 1024 * 1024

_EMPTY: Mapping[str, str] = MappingProxyType({})
_KNOWN = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "type", "timeout", "maxLineBytes"}
)
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamablehttp"})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


class MCPTransport(StrEnum):
    """How the client talks to a server."""

    STDIO = "stdio"  #: a subprocess speaking on its stdin/stdout
    HTTP = "http"  #: Streamable HTTP at a URL


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPServerConfig:
    """One server of an ``mcpServers`` object.

    Attributes:
        name: the key naming the server (also the first part of its tools' names).
        transport: stdio (``command``) or Streamable HTTP (``url``).
        command, args, env, cwd: how to start a stdio server; ``env`` is added to the small
            environment every server gets (see `engine.mcp.process.server_environment`).
        url, headers: where a Streamable HTTP server listens and the headers sent to it.
        timeout: seconds one tool call may take before it is cancelled.
        max_line_bytes: the most bytes one message from a stdio server may hold
            (``"maxLineBytes"``); a longer answer fails its call, saying so.
        extra: the entry's other keys, as found (``disabled``, ``autoApprove``...).
    """

    name: str
    transport: MCPTransport
    command: str | None = None
    args: tuple[str, ...] = field(default=(), repr=False)  # may carry --api-key …
    env: Mapping[str, str] = field(default_factory=_empty, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)  # may carry ?key=…
    headers: Mapping[str, str] = field(default_factory=_empty, repr=False)
    timeout: float = DEFAULT_CALL_TIMEOUT
    max_line_bytes: int = MAX_LINE_BYTES
    extra: Mapping[str, Any] = field(default_factory=_empty, repr=False)


def load_mcp_config(
    source: Mapping[str, Any] | str | os.PathLike[str],
) -> tuple[MCPServerConfig, ...]:
    """Read an ``mcpServers`` configuration, in the order its servers are written.

    Args:
        source: the parsed object, the path of a JSON file, or JSON text (a string that
            starts with ``{``, as pasted).

    Raises:
        MCPConfigError: the file cannot be read, is not JSON, has no ``mcpServers`` object,
            or an entry is bad (the error names the server and the field).
    """
    where = "the configuration"
    if isinstance(source, Mapping):
        data: Any = source
    else:
        text = os.fspath(source)
        if isinstance(text, str) and text.lstrip().startswith("{"):
            where = "the pasted configuration"
        else:
            where = str(text)
            try:
                text = Path(text).read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                raise MCPConfigError(where, f"it could not be read ({exc})") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MCPConfigError(where, f"it is not valid JSON ({exc})") from exc
    if not isinstance(data, Mapping):
        raise MCPConfigError(where, "it is not a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, Mapping):
        raise MCPConfigError(where, 'it has no "mcpServers" object')
    return tuple(_server(where, name, entry) for name, entry in servers.items())


def _server(where: str, name: Any, entry: Any) -> MCPServerConfig:
    if not isinstance(name, str) or not name.strip():
        raise MCPConfigError(where, f"a server's name must be a non-empty text, not {name!r}")

    def bad(field_name: str, problem: str) -> MCPConfigError:
        return MCPConfigError(where, problem, server=name, field=field_name)

    if not isinstance(entry, Mapping):
        raise bad("entry", 'it must be an object with a "command" or a "url"')
    kind = entry.get("type")
    if kind is not None and not isinstance(kind, str):
        raise bad("type", f'it must be "stdio" or "http", not {kind!r}')
    kind = (kind or "").lower()
    if kind == "sse":
        raise bad("type", "the old SSE transport is not supported; use Streamable HTTP")
    if kind and kind != "stdio" and kind not in _HTTP_TYPES:
        raise bad("type", f'it must be "stdio" or "http", not {kind!r}')
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise bad("url", 'an entry has either a "command" or a "url", not both')
    if not has_command and not has_url:
        raise bad("command", 'it is missing: an entry needs a "command" or a "url"')
    extra = MappingProxyType({k: copy.deepcopy(v) for k, v in entry.items() if k not in _KNOWN})
    timeout = entry.get("timeout", DEFAULT_CALL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise bad("timeout", f"it must be a positive number of seconds, not {timeout!r}")
    max_line = entry.get("maxLineBytes", MAX_LINE_BYTES)
    if isinstance(max_line, bool) or not isinstance(max_line, int) or max_line < 1024:
        raise bad(
            "maxLineBytes", f"it must be a whole number of bytes (1024 or more), not {max_line!r}"
        )
    if has_command:
        if kind in _HTTP_TYPES:
            raise bad("type", 'an HTTP server needs a "url", not a "command"')
        command = entry["command"]
        if not isinstance(command, str) or not command.strip():
            raise bad("command", f"it must be a non-empty text, not {command!r}")
        args = entry.get("args", [])
        if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
            raise bad("args", "it must be a list of texts")
        cwd = entry.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd):
            raise bad("cwd", f"it must be a folder's path, not {cwd!r}")
        return MCPServerConfig(
            name=name,
            transport=MCPTransport.STDIO,
            command=command,
            args=tuple(args),
            env=_texts(entry.get("env"), bad("env", "it must be an object of texts")),
            cwd=cwd,
            timeout=float(timeout),
            max_line_bytes=max_line,
            extra=extra,
        )
    if kind == "stdio":
        raise bad("type", 'a stdio server needs a "command", not a "url"')
    url = entry["url"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise bad("url", "it must be an http:// or https:// address")
    return MCPServerConfig(
        name=name,
        transport=MCPTransport.HTTP,
        url=url,
        headers=_texts(entry.get("headers"), bad("headers", "it must be an object of texts")),
        timeout=float(timeout),
        extra=extra,
    )


def _texts(value: Any, error: MCPConfigError) -> Mapping[str, str]:
    """An object of texts; numbers and booleans (``"PORT": 8080``) are written as JSON does."""
    if value is None:
        return _EMPTY
    if not isinstance(value, Mapping):
        raise error
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, str):
            out[str(k)] = v
        elif isinstance(v, bool | int | float):
            out[str(k)] = json.dumps(v)
        else:
            raise error
    return MappingProxyType(out)

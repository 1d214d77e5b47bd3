"""Settings › Tools' presets: the reference MCP servers added in one click, and how each runs.

Owns `PRESETS` and `find_launch`, which finds how a preset's server runs on this computer, the
first found of: installed in the app's own environment (the time server is a dependency, so
the Time preset works without uv or a network: ``<python> -m mcp_server_time``, or
``continuo --mcp-server mcp_server_time`` in the bundle, which has no Python to run ``-m``
with; `ui.app.run_mcp_server`), the server's own command on PATH (``mcp-server-time``), then
``uvx``/``npx`` by name, as other apps write them. Blocking: the page calls it off the GUI
thread.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from enum import StrEnum
from importlib.util import find_spec

__all__ = ["PRESETS", "Launch", "LaunchKind", "Preset", "find_launch"]


@dataclass(frozen=True, slots=True)
class Preset:
    """A reference server added in one click; ``folder`` asks for a folder first."""

    key: str  # also the server's name
    program: str  # "uvx" or "npx", when nothing installed is found
    package: tuple[str, ...]  # what follows the program: ("mcp-server-time",)
    folder: str | None = None  # None, "folder" (appended) or "repository" (--repository path)
    module: str | None = None  # its Python module, when it may be installed in the app's env
    options: tuple[str, ...] = ()  # the server's own options, before the folder

    @property
    def script(self) -> str | None:
        """The command a Python server installs (``mcp-server-time``), found on PATH."""
        return self.module.replace("_", "-") if self.module else None


PRESETS = (
    Preset("time", "uvx", ("mcp-server-time",), module="mcp_server_time"),
    Preset("fetch", "uvx", ("mcp-server-fetch",), module="mcp_server_fetch"),
    Preset("filesystem", "npx", ("-y", "@modelcontextprotocol/server-filesystem"), "folder"),
    Preset(
        "git",
        "uvx",
        ("mcp-server-git",),
        "repository",
        module="mcp_server_git",
        options=("--repository",),
    ),
    Preset("memory", "npx", ("-y", "@modelcontextprotocol/server-memory")),
)


class LaunchKind(StrEnum):
    """Where a preset's server comes from."""

    APP = "app"  # installed in the app's own environment (or carried by the bundle)
    INSTALLED = "installed"  # its own command, found on PATH
    RUNNER = "runner"  # fetched and run by uvx or npx


@dataclass(frozen=True, slots=True)
class Launch:
    """How a preset's server will run: ``command`` with ``args`` (the folder comes after)."""

    kind: LaunchKind
    command: str
    args: tuple[str, ...]

    def shown(self) -> str:
        return " ".join((self.command, *self.args))


def find_launch(preset: Preset) -> Launch | None:
    """How ``preset`` runs here, the first found: the app's environment, its own command on
    PATH, then uvx/npx; None when none is. Blocking (looks at the disk)."""
    if preset.module is not None and find_spec(preset.module) is not None:
        if getattr(sys, "frozen", False):  # the bundle: no Python to run -m with
            args = ("--mcp-server", preset.module, *preset.options)
        else:
            args = ("-m", preset.module, *preset.options)
        return Launch(LaunchKind.APP, sys.executable, args)
    script = preset.script
    if script is not None and shutil.which(script) is not None:
        return Launch(LaunchKind.INSTALLED, script, preset.options)
    if shutil.which(preset.program) is not None:
        return Launch(LaunchKind.RUNNER, preset.program, (*preset.package, *preset.options))
    return None

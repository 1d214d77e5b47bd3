"""Check, before `make run` starts the window, that Qt's X11 (xcb) plugin can load.

PySide6's wheels bring Qt but not the system libraries its xcb platform plugin links
against (libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1...). Without one of them Qt aborts
at start with a message naming only the first, and the next ones show only with ``ldd``.
This script runs ``ldd`` on PySide6's ``libqxcb.so`` once, lists every library "not found",
and names the Debian/Ubuntu packages that provide them:

- run as root where ``apt-get`` exists, it installs them (``apt-get install -y``), then
  checks again;
- otherwise it stops (exit status 1) with the exact ``sudo apt-get install -y ...`` line to
  run, or, without apt-get, the libraries to find in the system's own packages.

Nothing is checked when ``QT_QPA_PLATFORM`` names another platform (offscreen, wayland),
outside Linux, or when PySide6's plugin or ``ldd`` cannot be found (Qt then speaks for
itself). ``CONTINUO_LDD`` and ``CONTINUO_APT_GET`` name other commands to run instead of
``ldd`` and ``apt-get`` (the tests use stand-ins; no package is installed by a test).

Usage: ``python packaging/check_qt_libs.py`` (the Makefile's ``run`` target does).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Debian/Ubuntu package for each library Qt's xcb plugin (and the Qt libraries under it)
#: may miss on a desktop; names are the same on Debian 12 and Ubuntu 22.04/24.04.
PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libOpenGL.so.0": "libopengl0",
    "libGLX.so.0": "libglx0",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}

#: one line of ldd's output for a library it could not find
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$", re.MULTILINE)


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ``ldd`` reported "not found", each once, in the order first seen."""
    return list(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def packages_for(libraries: Sequence[str]) -> tuple[list[str], list[str]]:
    """The packages providing ``libraries``, and the libraries no known package provides."""
    known = [PACKAGES[lib] for lib in libraries if lib in PACKAGES]
    unknown = [lib for lib in libraries if lib not in PACKAGES]
    return list(dict.fromkeys(known)), unknown


def xcb_plugin() -> Path | None:
    """PySide6's xcb platform plugin, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        plugin = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def wants_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will try its xcb plugin: on Linux, unless told to use another platform."""
    if not sys.platform.startswith("linux"):
        return False
    platform = environ.get("QT_QPA_PLATFORM", "").strip()
    # "xcb", "xcb:option=..." or a fallback list such as "wayland;xcb" that may reach xcb.
    return not platform or any(p.split(":")[0] == "xcb" for p in platform.split(";"))


def run_ldd(ldd: str, plugin: Path) -> str | None:
    """ldd's report on ``plugin``, or None when ldd cannot be run."""
    command = shutil.which(ldd)
    if command is None:
        return None
    result = subprocess.run(
        [command, str(plugin)], capture_output=True, text=True, check=False, timeout=60
    )
    return result.stdout


def main(
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    euid: int | None = None,
    plugin: Path | None = None,
) -> int:
    """Check (and on Debian as root, install); 0 when Qt's xcb plugin can load."""
    env = os.environ if environ is None else environ
    if not wants_xcb(env):
        return 0
    plugin = plugin or xcb_plugin()
    if plugin is None:
        return 0
    ldd = env.get("CONTINUO_LDD", "ldd")
    report = run_ldd(ldd, plugin)
    if report is None:
        return 0
    missing = missing_libraries(report)
    if not missing:
        return 0
    packages, unknown = packages_for(missing)
    apt_get = shutil.which(env.get("CONTINUO_APT_GET", "apt-get"))
    is_root = (os.geteuid() if euid is None else euid) == 0
    say = sys.stderr.write
    say(f"Qt's X11 platform plugin needs libraries this system lacks: {', '.join(missing)}.\n")
    if apt_get is not None and packages:
        if is_root:
            say(f"Installing {' '.join(packages)} with apt-get...\n")
            installed = subprocess.run([apt_get, "install", "-y", *packages], check=False)
            if installed.returncode == 0:
                report = run_ldd(ldd, plugin) or ""
                still = missing_libraries(report)
                if not still:
                    return 0
                say(f"Still missing after the install: {', '.join(still)}.\n")
                return 1
            say("apt-get could not install them. Run `apt-get update`, then:\n")
            say(f"    apt-get install -y {' '.join(packages)}\n")
            return 1
        say("Install them, then run `make run` again:\n")
        say(f"    sudo apt-get install -y {' '.join(packages)}\n")
    elif packages:
        say("Install the packages that provide them (on Debian and Ubuntu: ")
        say(f"{' '.join(packages)}), then run `make run` again.\n")
    if unknown:
        say(
            "Find the package for each of "
            f"{', '.join(unknown)} (e.g. `apt-file search {unknown[0]}`) and install it.\n"
        )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

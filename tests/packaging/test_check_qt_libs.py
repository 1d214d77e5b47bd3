"""packaging/check_qt_libs.py, run by `make run`: Qt's xcb libraries, named and installed.

The checker runs real commands; here they are stand-in scripts in tmp_path: an ``ldd`` that
prints a listing with some libraries "not found" (all found once the stand-in ``apt-get``
has run) and an ``apt-get`` that records its arguments. No package is installed by a test.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "packaging" / "check_qt_libs.py"

#: what ldd printed for PySide6 6.11's libqxcb.so on a desktop without Qt's xcb libraries
LISTING = """\
\tlinux-vdso.so.1 (0x00007ffd5a9e8000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f52cd441000)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-util.so.1 => /lib/x86_64-linux-gnu/libxcb-util.so.1 (0x00007f52cd34f000)
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f52cc7b4000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
"""
INSTALL = "apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_qt_libs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Tools:
    """A stand-in ldd and apt-get in ``folder``; ``installed`` is the apt-get's mark."""

    def __init__(self, folder: Path, listing: str = LISTING, apt_status: int = 0) -> None:
        self.folder = folder
        self.listing = folder / "listing.txt"
        self.listing.write_text(listing)
        self.ldd_calls = folder / "ldd-calls"
        self.apt_calls = folder / "apt-calls"
        self.installed = folder / "installed"
        self.ldd = self._script(
            "ldd",
            f'echo "$1" >> {self.ldd_calls}\n'
            f"if [ -e {self.installed} ]; then grep -v 'not found' {self.listing}; "
            f"else cat {self.listing}; fi\n",
        )
        self.apt_get = self._script(
            "apt-get", f'echo "$@" >> {self.apt_calls}\ntouch {self.installed}\nexit {apt_status}\n'
        )

    def _script(self, name: str, body: str) -> Path:
        path = self.folder / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
        return path

    def env(self, **more: str) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "CONTINUO_LDD": str(self.ldd),
            "CONTINUO_APT_GET": str(self.apt_get),
            **more,
        }

    def calls(self, path: Path) -> list[str]:
        return path.read_text().splitlines() if path.exists() else []


def run_script(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )


def test_without_root_it_stops_with_the_exact_sudo_line(check, tmp_path, capsys) -> None:
    tools = Tools(tmp_path)
    plugin = tmp_path / "libqxcb.so"
    status = check.main([], environ=tools.env(), euid=1000, plugin=plugin)
    err = capsys.readouterr().err
    assert status == 1
    assert f"    sudo {INSTALL}\n" in err
    assert "libxcb-cursor.so.0, libxcb-icccm.so.4, libxcb-keysyms.so.1" in err
    assert tools.calls(tools.ldd_calls) == [str(plugin)]
    assert tools.calls(tools.apt_calls) == [], "only root installs"


def test_as_root_it_installs_them_and_checks_again(check, tmp_path, capsys) -> None:
    tools = Tools(tmp_path)
    status = check.main([], environ=tools.env(), euid=0, plugin=tmp_path / "libqxcb.so")
    assert status == 0, capsys.readouterr().err
    assert tools.calls(tools.apt_calls) == [INSTALL.removeprefix("apt-get ")]
    assert len(tools.calls(tools.ldd_calls)) == 2, "checked again after the install"


def test_as_root_a_failed_install_stops_the_start(check, tmp_path, capsys) -> None:
    tools = Tools(tmp_path, apt_status=100)
    status = check.main([], environ=tools.env(), euid=0, plugin=tmp_path / "libqxcb.so")
    assert status == 1
    assert INSTALL in capsys.readouterr().err


def test_a_library_no_package_is_known_for_is_named(check, tmp_path, capsys) -> None:
    tools = Tools(
        tmp_path, listing="\tlibxcb-cursor.so.0 => not found\n\tlibfoo.so.9 => not found\n"
    )
    status = check.main([], environ=tools.env(), euid=1000, plugin=tmp_path / "libqxcb.so")
    err = capsys.readouterr().err
    assert status == 1
    assert "sudo apt-get install -y libxcb-cursor0\n" in err
    assert "apt-file search libfoo.so.9" in err


def test_the_script_finds_pyside6s_plugin_and_names_the_packages(tmp_path) -> None:
    # The real script as `make run` runs it, on a system without apt-get.
    tools = Tools(tmp_path)
    result = run_script(tools.env(CONTINUO_APT_GET=str(tmp_path / "no-apt-get")))
    assert result.returncode == 1
    assert "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in result.stderr
    (checked,) = tools.calls(tools.ldd_calls)
    assert checked.endswith("PySide6/Qt/plugins/platforms/libqxcb.so")


def test_nothing_missing_says_nothing(tmp_path) -> None:
    tools = Tools(tmp_path, listing="\tlibxcb.so.1 => /lib/libxcb.so.1 (0x1)\n")
    result = run_script(tools.env(QT_QPA_PLATFORM="xcb"))
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize("platform", ["offscreen", "wayland", "minimal"])
def test_another_platform_is_not_checked(tmp_path, platform) -> None:
    tools = Tools(tmp_path)
    result = run_script(tools.env(QT_QPA_PLATFORM=platform))
    assert (result.returncode, result.stderr) == (0, "")
    assert tools.calls(tools.ldd_calls) == []


def test_make_run_checks_before_starting() -> None:
    recipe = (REPO / "Makefile").read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in recipe.splitlines()[1:]]
    assert lines[0] == "$(PY) packaging/check_qt_libs.py"
    assert lines[1].startswith("$(PY) -m ui")

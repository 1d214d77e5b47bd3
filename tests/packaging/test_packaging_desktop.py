"""The freedesktop entry and `make install-desktop` (packaging/install-desktop.sh).

The installer is run for real into a temporary $HOME-like tree (PREFIX, XDG_DATA_HOME) over a
stand-in bundle: a folder whose ``continuo`` is a small executable that reports it was run.
That proves the launcher entry, the command symlink and the icons point at a copy that
starts, without spending a minute on a PyInstaller build (CI builds the real one and runs
packaging/smoke.sh against it).
"""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DESKTOP = REPO / "resources" / "continuo.desktop"
INSTALL = REPO / "packaging" / "install-desktop.sh"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in Desktop Entry files
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def test_desktop_entry_names_the_app_its_icon_and_command() -> None:
    entry = _entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Continuo"
    assert entry["Icon"] == "continuo"  # the hicolor theme name install-desktop.sh installs
    assert entry["Exec"] == "continuo"  # the gui-script; the installed copy names the bundle
    assert entry["Terminal"] == "false"
    # A registered main category, so launchers file it somewhere sensible.
    assert "Chat" in entry["Categories"].split(";")
    assert entry["Categories"].endswith(";") and entry["Keywords"].endswith(";")
    # The app ships a Simplified Chinese translation; its launcher entry reads in Chinese too.
    assert entry["Comment[zh_CN]"] and entry["GenericName[zh_CN]"]


@pytest.fixture
def fake_bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "dist" / "Continuo"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "_internal" / "payload.txt").write_text("library stand-in\n")
    exe = bundle / "continuo"
    exe.write_text('#!/bin/sh\necho "stand-in bundle ran with: $*"\n')
    exe.chmod(0o755)
    return bundle


def _install(
    tmp_path: Path, *args: str, bundle: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        PREFIX=str(tmp_path / "home" / ".local"),
        XDG_DATA_HOME=str(tmp_path / "home" / ".local" / "share"),
        BUNDLE=str(bundle or tmp_path / "no-bundle-here"),
    )
    return subprocess.run(
        ["bash", str(INSTALL), *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_install_copies_the_bundle_and_registers_entry_and_icons(
    tmp_path: Path, fake_bundle: Path
) -> None:
    result = _install(tmp_path, bundle=fake_bundle)
    assert result.returncode == 0, result.stderr

    local = tmp_path / "home" / ".local"
    app = local / "lib" / "continuo" / "continuo"
    assert (local / "lib" / "continuo" / "_internal" / "payload.txt").read_text() == (
        "library stand-in\n"
    )
    entry = _entry(local / "share" / "applications" / "continuo.desktop")
    assert entry["Exec"] == f'"{app}"'
    assert entry["TryExec"] == str(app)
    assert entry["Icon"] == "continuo" and entry["Name"] == "Continuo"
    for size in SIZES:
        installed = (
            local / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "continuo.png"
        )
        assert (
            installed.read_bytes()
            == (REPO / "resources" / "icons" / f"continuo-{size}.png").read_bytes()
        )
    assert (local / "share" / "icons" / "hicolor" / "scalable" / "apps" / "continuo.svg").is_file()

    # What a double-click runs, and the command on PATH, start the copied bundle.
    ran = subprocess.run([app, "--version"], capture_output=True, text=True, timeout=30)
    assert ran.stdout.strip() == "stand-in bundle ran with: --version"
    via_link = subprocess.run(
        [local / "bin" / "continuo", "x"], capture_output=True, text=True, timeout=30
    )
    assert via_link.stdout.strip() == "stand-in bundle ran with: x"
    # The installed copy does not depend on dist/ staying around (`make clean`).
    (fake_bundle / "continuo").unlink()
    assert subprocess.run([app], capture_output=True, timeout=30).returncode == 0


def test_reinstall_replaces_the_copy_and_uninstall_removes_everything(
    tmp_path: Path, fake_bundle: Path
) -> None:
    assert _install(tmp_path, bundle=fake_bundle).returncode == 0
    (fake_bundle / "_internal" / "payload.txt").write_text("new version\n")
    (fake_bundle / "_internal" / "added.txt").write_text("added\n")
    assert _install(tmp_path, bundle=fake_bundle).returncode == 0
    lib = tmp_path / "home" / ".local" / "lib"
    assert (lib / "continuo" / "_internal" / "payload.txt").read_text() == "new version\n"
    assert sorted(p.name for p in lib.iterdir()) == ["continuo"]  # no staging left behind

    result = _install(tmp_path, "--uninstall")
    assert result.returncode == 0, result.stderr
    assert "conversations in your data folder were kept" in result.stdout
    left = [
        p
        for p in (tmp_path / "home").rglob("*")
        if p.is_file() and p.name not in {"mimeinfo.cache", "icon-theme.cache"}
    ]
    assert left == []


def test_install_without_a_bundle_says_to_build_one(tmp_path: Path) -> None:
    result = _install(tmp_path)
    assert result.returncode == 1
    assert "Run 'make bundle' first" in result.stderr
    assert not (tmp_path / "home" / ".local" / "share" / "applications").exists()

"""The tool-server and Chinese-text states of ``make screenshots`` (issue 20, items 5, 15-18, 21).

`run_tool_states` is called by `devtools.screenshots` (the whole ``make screenshots`` run);
``python -m devtools.tool_shots OUTDIR`` renders only these, offscreen. Each state drives a
real window as a person would, over a throw-away data folder:

- ``settings-tools-presets`` (and ``-zh``): Settings › Tools without a keychain (one
  warning), a server with a long command (wrapped, no horizontal scroll bar), two servers just
  imported ("Imported 2 servers"), "Press Apply first" beside Check, and the presets with what
  each will run (Time: installed with Continuo; Fetch and Git: needs uv when uv is not found).
- ``tool-server-failed`` (and ``-zh``): the status bar after a server whose command does not
  exist failed to start, in words; the header's Tools button with its arrow beside "Tools".
- ``interrupted-zh``: a cut-off answer's notice in Chinese, its two sentences joined without
  a space after "。".
- ``file-dialog-zh``: Qt's own file dialog (Settings › Tools › Import a file…) in Chinese.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["run_tool_states"]

SERVER = Path(__file__).resolve().parents[1] / "tests" / "support" / "mcp_server.py"
LONG = "/opt/tools/a-rather-long-folder-name/another-long-folder/bin/mcp-server-with-a-long-name"


def _mcp_json(data: Path, servers: dict[str, Any]) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def _tools_page_shot(data: Path, out: Path, name: str) -> None:
    from devtools.screenshots import _close, _Scripted, _until, _window

    notes = {"command": sys.executable, "args": [str(SERVER)], "env": {"MCP_NOTES": os.devnull}}
    _mcp_json(data, {"notes": notes, "long": {"command": LONG}})
    imported = data.parent / f"{name}-import.json"
    imported.write_text(
        json.dumps({"mcpServers": {"weather": {"command": "uvx"}, "github": {"command": "npx"}}})
    )
    window = await _window(data, _Scripted("Done."))
    dialog = window.open_tool_settings()
    page = dialog.toolsPage
    await _until(lambda: page.is_loaded and dialog.is_loaded and page.found is not None)
    dialog.resize(900, 680)
    await page._import_path(str(imported))
    page.toolServerList.setCurrentRow(page.toolServerList.count() - 1)
    page.checkServerButton.click()  # the imported server is not applied yet
    await asyncio.sleep(0.1)  # a picture, not synchronisation
    dialog.grab().save(str(out / f"{name}.png"))
    print(f"wrote {out / f'{name}.png'}")
    dialog.reject()
    await _close(window)


async def _failed_server_shot(data: Path, out: Path, name: str) -> None:
    from devtools.screenshots import _close, _Scripted, _shot, _until, _window

    _mcp_json(data, {"thing": {"command": "/nonexistent/mcp-thing"}})
    window = await _window(data, _Scripted("It answered without the tool server."))
    await _until(lambda: window.controller.tool_servers.names() == ["thing"])
    window.composer.setPlainText("What time is it?")
    window.send_button.click()
    await _until(lambda: "mcp-thing" in window.statusBar().currentMessage(), 30)
    sid = window.controller.current
    await _until(lambda: not window.controller.is_running(sid), 30)
    await _shot(window, out / f"{name}.png")
    await _close(window)


async def _interrupted_shot(data: Path, out: Path) -> None:
    from devtools.screenshots import ANSWER, _close, _Scripted, _shot, _until, _window

    model = _Scripted(ANSWER, hold=25, fail=True)
    window = await _window(data, model)
    window.composer.setPlainText("写一个带指数退避的重试函数")
    window.send_button.click()
    await model.held.wait()
    model.release.set()
    await _until(lambda: window.resume_button.isVisible(), 20)
    await _shot(window, out / "interrupted-zh.png")
    await _close(window)


async def _file_dialog_shot(data: Path, out: Path) -> None:
    from devtools.screenshots import _close, _Scripted, _until, _window

    folder = data.parent / "files"
    (folder / "项目").mkdir(parents=True)
    (folder / "mcp-servers.json").write_text("{}")
    window = await _window(data, _Scripted("Done."))
    dialog = window.open_tool_settings()
    page = dialog.toolsPage
    await _until(lambda: page.is_loaded)
    page.import_file()
    files = page.fileDialog
    files.setDirectory(str(folder))
    files.resize(760, 460)
    await asyncio.sleep(0.3)  # the folder is read in Qt's thread; a picture, not sync
    files.grab().save(str(out / "file-dialog-zh.png"))
    print(f"wrote {out / 'file-dialog-zh.png'}")
    files.reject()
    dialog.reject()
    await _close(window)


async def run_tool_states(root: Path, out: Path) -> None:
    """Render this module's states into ``out`` (see the module docstring)."""
    from PySide6.QtWidgets import QApplication

    from ui.common.i18n import install_translator
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_palette(app, "light")
    # No uv and no Node.js here, whatever this machine has: the presets say what they need.
    path = os.environ.get("PATH", "")
    empty = root / "empty-bin"
    empty.mkdir(parents=True)
    os.environ["PATH"] = str(empty)
    try:
        for language, suffix in (("en", ""), ("zh_CN", "-zh")):
            install_translator(app, language)
            await _tools_page_shot(root / f"tools{suffix}", out, f"settings-tools-presets{suffix}")
            await _failed_server_shot(root / f"failed{suffix}", out, f"tool-server-failed{suffix}")
        install_translator(app, "zh_CN")
        await _interrupted_shot(root / "interrupted-zh", out)
        await _file_dialog_shot(root / "file-dialog-zh", out)
    finally:
        os.environ["PATH"] = path
        install_translator(app, "en")


def main(argv: list[str] | None = None) -> int:
    """Render only these states: ``python -m devtools.tool_shots OUTDIR``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ui.app import EventLoop

    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)

    async def run() -> None:
        from devtools.screenshots import _warm

        await _warm()
        with tempfile.TemporaryDirectory() as tmp:
            await run_tool_states(Path(tmp), out)

    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:  # type: ignore[arg-type]
        runner.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())

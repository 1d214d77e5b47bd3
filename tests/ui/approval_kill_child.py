"""The real window in a child process, waiting on an approval card, for the parent to SIGKILL.

Usage: ``python -m tests.ui.approval_kill_child DATA_DIR NOTES``.

The window is built over DATA_DIR (its settings name the loopback provider the parent runs)
with the tools of a real stdio MCP server (tests/support/mcp_server.py, whose ``note`` tool
appends to NOTES). It sends one message; once the model's call waits on its card, the child
prints ``SMOKE waiting`` (flushed) and waits for the kill.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.mcp import MCPToolset, load_mcp_config  # noqa: E402
from tests.support.wait import until  # noqa: E402
from ui.app import _event_loop_class, build_window  # noqa: E402
from ui.conversation.items import ItemKind, ItemState  # noqa: E402
from ui.settings.store import SettingsStore  # noqa: E402

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


async def run(data_dir: Path, notes: Path) -> None:
    entry = {"command": sys.executable, "args": [SERVER], "env": {"MCP_NOTES": str(notes)}}
    configs = load_mcp_config({"mcpServers": {"srv": entry}})
    async with MCPToolset(configs, log_dir=data_dir / "logs") as toolset:
        tools = await toolset.list_tools()
        store = SettingsStore(data_dir, use_keychain=False)
        window = build_window(data_dir, settings_store=store, tools=tools, first_run_dialog=False)
        window.show()
        await window.started()
        window.composer.setPlainText("Note something.")
        window.send_button.click()

        def waiting() -> bool:
            model = window.transcript.model()
            return model is not None and any(
                i.kind is ItemKind.TOOL and i.state is ItemState.AWAITING_APPROVAL
                for i in model.items()
            )

        await until(waiting, what="the approval card", seconds=60)
        print("SMOKE waiting", flush=True)
        await asyncio.Event().wait()  # until the parent kills this process


def main() -> None:
    data_dir, notes = Path(sys.argv[1]), Path(sys.argv[2])
    app = QApplication(sys.argv[:1])
    loop = _event_loop_class()(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(run(data_dir, notes))


if __name__ == "__main__":
    main()

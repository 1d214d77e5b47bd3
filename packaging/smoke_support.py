"""The provider side of the bundle smoke test (packaging/smoke.sh), run from the source venv.

Four commands, all from the repository root::

    python packaging/smoke_support.py serve --data-dir DIR
    python packaging/smoke_support.py check --data-dir DIR
    python packaging/smoke_support.py tools-setup --data-dir DIR2 --url URL
    python packaging/smoke_support.py check-tools --data-dir DIR2

``serve`` starts the loopback provider server (tests/support/provider_server.py) with the
smoke's script, writes DIR/settings.json naming it as the only provider (through the app's
own `SettingsStore`, so the file is exactly what the app writes), prints
``SMOKE-SERVER <openai base url>`` and serves until its standard input closes or it is
terminated. The script, chosen by the person's message rather than by request order so that
no other request can shift it:

- a message containing ``first`` is answered in full, ending in ``FIRST-ANSWER-DONE``;
- the first message containing ``second`` gets part of an answer (``PARTIAL-SHOWN`` among
  it) and then a stream that stalls, so the app is certainly mid-answer when it is killed;
  every later request for it (the Resume) is answered in full, ending in ``RESUMED-DONE``.

- a message containing ``tool`` is answered with a call of the MCP tool ``srv__note``; once
  its result comes back, with an answer ending in ``TOOL-DONE``.

``tools-setup`` writes DIR2/settings.json naming the same server (URL), and DIR2/mcp.json
with one stdio MCP server ``srv``: this venv's python running tests/support/mcp_server.py,
whose ``note`` tool appends a line to DIR2/notes.txt. ``check-tools`` reads DIR2 back: the
call, its result, the answer, and exactly one line in notes.txt.

``check`` reads the conversation back from DIR/continuo.sqlite3 with the engine's storage
and exits non-zero unless it holds exactly: the first message, its answer, the second
message, one complete answer to it. Nothing but this smoke test uses this file; it is not in
the bundle.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FIRST_DONE = "FIRST-ANSWER-DONE"
PARTIAL = "PARTIAL-SHOWN"
RESUMED_DONE = "RESUMED-DONE"
TOOL_DONE = "TOOL-DONE"
NOTE = "noted by the smoke test"
PROVIDER_ID = "smoke-loopback"


def _script():  # -> Callable[[RecordedRequest], Turn]
    from tests.support.provider_server import Fault, RecordedRequest, ScriptedCall, Turn, echo_turn

    lock = threading.Lock()
    seconds = 0

    def answer(request: RecordedRequest) -> Turn:
        nonlocal seconds
        text = request.last_user_text().lower()
        if "second" in text:
            with lock:
                seconds += 1
                first_try = seconds == 1
            if first_try:
                # Enough events for the partial to reach the screen, then silence: the app
                # is killed while this stream is open. fault_after counts events sent.
                return Turn(
                    text=f"{PARTIAL}: this second answer starts streaming and then stalls "
                    "until the app is killed, so this sentence never completes.",
                    chunk_size=12,
                    fault=Fault.STALL_MIDSTREAM,
                    fault_after=5,  # the role chunk, then four pieces of text
                )
            return Turn(text=f"The second answer, resumed and complete. {RESUMED_DONE}")
        if "tool" in text:
            if request.last_is_tool_result():
                return Turn(text=f"The MCP server noted it. {TOOL_DONE}")
            return Turn(tool_calls=[ScriptedCall("srv__note", {"text": NOTE}, id="smoke_call")])
        if "first" in text:
            return Turn(text=f"Hello from the loopback provider. **{FIRST_DONE}**")
        return echo_turn(request)

    return answer


def tools_setup(data_dir: Path, base_url: str) -> int:
    """Settings naming the running server, and an mcp.json with one stdio server."""
    import json

    data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(_write_settings(data_dir, base_url))
    server = {
        "command": sys.executable,
        "args": [str(REPO / "tests" / "support" / "mcp_server.py")],
        "env": {"MCP_NOTES": str(data_dir / "notes.txt")},
    }
    (data_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}, indent=2))
    return 0


async def _only_conversation(data_dir: Path) -> list[Any] | str:
    """The messages of the data folder's one conversation, or what is wrong instead."""
    from engine import SQLiteSessionStorage

    storage = SQLiteSessionStorage(data_dir / "continuo.sqlite3")
    try:
        sessions = await storage.list_sessions()
        if len(sessions) != 1:
            return f"expected 1 conversation, found {len(sessions)}"
        return list(await storage.load(sessions[0].id))
    finally:
        await storage.close()


async def _check_tools(data_dir: Path) -> list[str]:
    from engine import AssistantMessage, ToolMessage, ToolOutcome

    messages = await _only_conversation(data_dir)
    if isinstance(messages, str):
        return [messages]
    kinds = [type(m).__name__ for m in messages]
    expected = ["UserMessage", "AssistantMessage", "ToolMessage", "AssistantMessage"]
    if kinds != expected:
        return [f"expected messages {expected}, found {kinds}"]
    _question, call, result, answer = messages
    problems = []
    if not (
        isinstance(call, AssistantMessage) and [c.name for c in call.tool_calls] == ["srv__note"]
    ):
        problems.append("the model's tool call was not stored")
    if not (
        isinstance(result, ToolMessage)
        and result.outcome is ToolOutcome.OK
        and result.content == f"Noted: {NOTE}"
    ):
        problems.append(f"the tool's result is not the server's: {result!r}")
    if not (isinstance(answer, AssistantMessage) and TOOL_DONE in answer.content):
        problems.append("the answer after the tool was not stored")
    notes = data_dir / "notes.txt"
    lines = notes.read_text().splitlines() if notes.exists() else []
    if lines != [NOTE]:
        problems.append(f"the server's tool ran {len(lines)} times, not once")
    return problems


def check_tools(data_dir: Path) -> int:
    problems = asyncio.run(_check_tools(data_dir))
    for problem in problems:
        print(f"SMOKE-CHECK FAIL {problem}", flush=True)
    if not problems:
        print("SMOKE-CHECK ok: one MCP tool call approved, run once, answered", flush=True)
    return 1 if problems else 0


async def _write_settings(data_dir: Path, base_url: str) -> None:
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    store = SettingsStore(data_dir, use_keychain=False)
    provider = ProviderConfig(
        id=PROVIDER_ID,
        kind="openai",
        name="Loopback (smoke test)",
        base_url=base_url,
        default_model="loopback",
    )
    await store.save(Settings(providers=[provider], default_provider_id=PROVIDER_ID))


def serve(data_dir: Path) -> int:
    """Run the scripted server until stdin closes; print its URL once settings are written."""
    from tests.support.provider_server import ProviderServer

    data_dir.mkdir(parents=True, exist_ok=True)
    server = ProviderServer()
    server.default = _script()
    server.start()
    try:
        asyncio.run(_write_settings(data_dir, server.openai_url))
        print(f"SMOKE-SERVER {server.openai_url}", flush=True)
        # Serve until the shell closes our stdin (or kills us): no polling, no sleeping.
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


async def _check(data_dir: Path) -> list[str]:
    from engine import AssistantMessage, UserMessage

    messages = await _only_conversation(data_dir)
    if isinstance(messages, str):
        return [messages]
    kinds = [type(m).__name__ for m in messages]
    problems = []
    expected = ["UserMessage", "AssistantMessage", "UserMessage", "AssistantMessage"]
    if kinds != expected:
        problems.append(f"expected messages {expected}, found {kinds}")
    else:
        first, answer, second, resumed = messages
        checks = [
            (isinstance(first, UserMessage) and "first" in first.content.lower(), "1st message"),
            (isinstance(answer, AssistantMessage) and FIRST_DONE in answer.content, "1st answer"),
            (isinstance(second, UserMessage) and "second" in second.content.lower(), "2nd message"),
            (
                isinstance(resumed, AssistantMessage)
                and RESUMED_DONE in resumed.content
                and resumed.stop is None,
                "resumed answer",
            ),
        ]
        problems.extend(f"{what} is not what was sent or answered" for ok, what in checks if not ok)
    return problems


def check(data_dir: Path) -> int:
    """Print what is wrong with the stored conversation; return 0 when nothing is."""
    problems = asyncio.run(_check(data_dir))
    for problem in problems:
        print(f"SMOKE-CHECK FAIL {problem}", flush=True)
    if not problems:
        print("SMOKE-CHECK ok: both answers stored once, the second one through Resume", flush=True)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("serve", "check", "tools-setup", "check-tools"))
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--url", help="the loopback provider's base URL (tools-setup)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.data_dir)
    if args.command == "tools-setup":
        return tools_setup(args.data_dir, args.url)
    if args.command == "check-tools":
        return check_tools(args.data_dir)
    return check(args.data_dir)


if __name__ == "__main__":
    sys.exit(main())

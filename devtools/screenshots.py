"""``python -m devtools.screenshots OUTDIR`` (``make screenshots``): PNGs of the window's states.

Each state is reached by driving a real window the way a person would, over a throw-away data
folder, with an in-process scripted model (no network) whose stream waits on events so a
screenshot can catch it mid-answer. Offscreen there is no system theme, so each shot forces
the light or dark palette explicitly. The Chinese shot needs the shipped translations and a
CJK font (``fonts-noto-cjk``).

States: ``empty``, ``streaming``, ``tool-card``, ``resume-offered``, ``earlier-attempt`` (a
cut-off answer Resume redid, folded), ``storage-failure`` (a damaged conversation file at
start-up), ``error``, ``untrusted`` (an image as its alt text and address, a folded code
block, a long word wrapping, a link whose text names another host), ``chinese``, and
``session-groups``, ``filter-no-matches``, ``about``, ``narrow-640`` and ``narrow-folded``
(a narrow window; with their Chinese ``-zh`` twins), ``empty-list-zh``, the tool-server and
Chinese-text states of `devtools.tool_shots` (``settings-tools-presets``,
``tool-server-failed``, each also ``-zh``; ``interrupted-zh``, ``file-dialog-zh``), the
archive and search states of `devtools.archive_shots` (``export-file-dialog``,
``export-format-followed``, ``restore-not-a-backup``, ``search-long-title``, the last three in
Chinese too), the transcript's (`devtools.screenshots_transcript`: ``stopped-answer``,
``message-focus``, ``message-menu``, ``find-tall-message``, ``lists-and-tables``), and
``scaled-200``: a finished conversation with a tool card, a code block and a table at 200%
scaling, maximised on a 1920x1080 screen (960x540 logical pixels). Scaling is fixed when a
process starts, so that shot is taken by a second run of this module (``--scaled``) with
``QT_SCALE_FACTOR=2`` and an offscreen screen of that size.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from engine import (  # noqa: E402
    AssistantMessage,
    InternalMessage,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    ProviderConnectionError,
    SQLiteSessionStorage,
    StopInfo,
    StopReason,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
    tool,
)

__all__ = ["main"]

SCALED_SCREEN = (1920, 1080)  #: physical pixels of the 200% shot's screen

ANSWER = """Here is a small **Python** function that retries a request with exponential backoff:

```python
import time

def retry(call, attempts=4):
    for n in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(2 ** n)
    raise RuntimeError("gave up")
```

| attempt | wait |
|---|---|
| 1 | 1 s |
| 2 | 2 s |

It keeps the first error's message, so the person"""


class _Scripted:
    """A model that streams ``text`` in pieces, pausing at ``hold`` until ``release`` is set."""

    name = "llama3.1-8b"

    def __init__(
        self,
        text: str,
        *,
        hold: int | None = None,
        fail: bool = False,
        calls: tuple[ToolCall, ...] = (),
    ) -> None:
        self.text, self.hold, self.fail, self.calls = text, hold, fail, calls
        self.release = asyncio.Event()
        self.held = asyncio.Event()
        self.turn = 0

    async def list_models(self) -> list[str]:
        return ["llama3.1-8b", "qwen2.5-14b"]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.turn += 1
        if self.calls and self.turn == 1:
            yield ModelEvent.text("Let me look that up.")
            message = AssistantMessage(content="Let me look that up.", tool_calls=self.calls)
            yield ModelEvent.completed(ModelResponse(message))
            return
        pieces = [self.text[i : i + 12] for i in range(0, len(self.text), 12)]
        for n, piece in enumerate(pieces):
            if self.hold is not None and n == self.hold:
                self.held.set()
                await self.release.wait()
                if self.fail:
                    raise ProviderConnectionError(
                        "The connection to the provider broke.", provider="Local model"
                    )
            yield ModelEvent.text(piece)
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content=self.text)))


async def _settings(data_dir: Path) -> Any:
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    store = SettingsStore(data_dir, use_keychain=False)
    config = ProviderConfig(
        id="local",
        kind="openai",
        name="Local model",
        base_url="http://127.0.0.1:9/v1",
        default_model="llama3.1-8b",
    )
    await store.save(Settings(providers=[config], default_provider_id="local"))
    return store


async def _window(data_dir: Path, model: Any, tools: Any = (), *, maximised: bool = False) -> Any:
    from ui.app import build_window

    store = await _settings(data_dir)

    async def factory(config: Any, model_id: str | None) -> Any:
        return model

    window = build_window(
        data_dir, settings_store=store, model_factory=factory, tools=tools, first_run_dialog=False
    )
    if maximised:
        window.showMaximized()
    else:
        window.resize(1100, 720)
        window.show()
    await window.started()
    await _until(lambda: window.model_picker.count() > 0)
    return window


async def _until(condition: Any, seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise RuntimeError(f"screenshot state not reached: {condition}")
        await asyncio.sleep(0.01)


async def _shot(window: Any, path: Path) -> None:
    window.transcript.flush()
    await asyncio.sleep(0.05)  # let layout settle and paint; a picture, not synchronisation
    window.transcript.scroll_to_bottom()
    window.grab().save(str(path))
    print(f"wrote {path}")


async def _close(window: Any) -> None:
    closed = asyncio.Event()
    window.closed.connect(closed.set)
    window.close()
    await closed.wait()


async def _seed(data_dir: Path, sid: str, title: str, messages: list[Any]) -> None:
    from ui.controller import DB_FILE_NAME

    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    try:
        await storage.create_session(session_id=sid, title=title)
        for message in messages:
            await storage.append(sid, "seed", message)
    finally:
        await storage.close()


async def _warm() -> None:
    # Markdown's libraries load in a worker thread when the first row appears; a code block
    # rendered on the GUI thread before that is done could race it. Pictures wait for it.
    from ui.common.markdown import wait_warm

    await asyncio.to_thread(wait_warm, 30)


async def _run(out: Path) -> int:
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    await _warm()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        apply_palette(app, "light")
        model = _Scripted(ANSWER, hold=20)
        window = await _window(root / "empty", model)
        await _shot(window, out / "empty.png")
        window.composer.setPlainText("Write a retry helper with exponential backoff")
        window.send_button.click()
        await model.held.wait()
        await _shot(window, out / "streaming.png")
        model.release.set()
        await _close(window)

        apply_palette(app, "dark")
        gate = asyncio.Event()

        @tool
        async def search_files(pattern: str, folder: str) -> str:
            """Search files.

            Args:
                pattern: what to look for.
                folder: where.
            """
            await gate.wait()
            return "notes/2026-03.md: 'backoff'"

        call = ToolCall("call_1", "search_files", {"pattern": "backoff", "folder": "~/notes"})
        model = _Scripted("I found it in your March notes.", calls=(call,))
        window = await _window(root / "tool", model, tools=[search_files])
        window.composer.setPlainText("Where did I write about backoff?")
        window.send_button.click()
        await _until(lambda: window.stop_button.isVisible() and len(window.transcript.views()) >= 2)
        await asyncio.sleep(0.05)
        await _shot(window, out / "tool-card.png")
        gate.set()
        await _close(window)

        apply_palette(app, "light")
        await _run_mcp_states(root / "mcp", out)
        await _run_version_states(root / "versions", out)
        await _run_search_states(root / "search", out)
        from devtools.archive_shots import run_archive_states
        from devtools.screenshots_transcript import run_transcript_states

        await run_archive_states(root / "archive", out)
        await run_transcript_states(root / "transcript", out)

        apply_palette(app, "light")
        data = root / "resume"
        cut = StopInfo(
            StopReason.INTERRUPTED,
            raw="network_error",
            message="The connection to the provider broke before the answer finished.",
        )
        await _seed(
            data,
            "s-resume",
            "Backoff helper",
            [
                UserMessage(content="Write a retry helper with exponential backoff"),
                AssistantMessage(content=ANSWER[:300], stop=cut),
            ],
        )
        window = await _window(data, _Scripted("Done."))
        await _until(lambda: window.resume_button.isVisible())
        await _shot(window, out / "resume-offered.png")
        await _close(window)

        data = root / "earlier"
        await _seed(
            data,
            "s-earlier",
            "Backoff helper",
            [
                UserMessage(content="Write a retry helper with exponential backoff"),
                AssistantMessage(content=ANSWER[:300], stop=cut),
                InternalMessage(content="Redo it.", tag="resume:retry_response"),
                AssistantMessage(content=ANSWER + " sees what went wrong."),
            ],
        )
        window = await _window(data, _Scripted("Done."))
        await _until(lambda: len(window.transcript.views()) == 4)
        window.transcript.verticalScrollBar().setValue(0)
        window.transcript.flush()
        await asyncio.sleep(0.05)
        window.grab().save(str(out / "earlier-attempt.png"))
        print(f"wrote {out / 'earlier-attempt.png'}")
        await _close(window)

        data = root / "damaged"
        data.mkdir()
        (data / "continuo.sqlite3").write_bytes(b"not a database: a damaged file " * 100)
        window = await _window(data, _Scripted("Done."))
        await _until(lambda: window.storage_notice.isVisible())
        await _shot(window, out / "storage-failure.png")
        await _close(window)

        model = _Scripted(ANSWER, hold=25, fail=True)
        window = await _window(root / "error", model)
        window.composer.setPlainText("Write a retry helper with exponential backoff")
        window.send_button.click()
        await model.held.wait()
        model.release.set()
        await _until(lambda: window.resume_button.isVisible())  # one notice: the row says it
        await _shot(window, out / "error.png")
        await _close(window)

        # Hostile text made harmless: an image as its alt text and address, a folded code
        # block, a 3,000-character word wrapping, a link whose text names another host.
        code = "".join(f"print('line {n}')\n" for n in range(300))
        hostile = (
            f"```python\n{code}```\n\n"
            "Here is the chart: ![sales chart](/home/me/chart.png)\n\n"
            f"A token: {'QUJD' * 150}\n\n"
            "Log in at [https://bank.example/login](http://127.0.0.1:9/phish)."
        )
        await _seed(
            root / "untrusted",
            "s-untrusted",
            "Untrusted answer",
            [UserMessage(content="Show me everything"), AssistantMessage(content=hostile)],
        )
        window = await _window(root / "untrusted", _Scripted("Done."))
        await _until(lambda: len(window.transcript.views()) >= 2)
        window.transcript.scroll_to_bottom()
        await _shot(window, out / "untrusted.png")
        await _close(window)

        from ui.common.i18n import install_translator

        install_translator(app, "zh_CN")
        apply_palette(app, "light")
        model = _Scripted(
            "当然可以。**指数退避**的意思是每次失败后等待的时间加倍：1 秒、2 秒、4 秒……", hold=3
        )
        await _seed(
            root / "zh",
            "s-zh",
            "重试策略",
            [
                UserMessage(content="什么是指数退避？"),
                AssistantMessage(content="指数退避是一种重试策略：每次失败后，等待时间翻倍。"),
            ],
        )
        window = await _window(root / "zh", model)
        window.composer.setPlainText("请再举一个例子")
        window.send_button.click()
        await model.held.wait()
        await _shot(window, out / "chinese.png")
        model.release.set()
        await _close(window)
        install_translator(app, "en")
        await _run_list_states(root / "list", out)
        await _run_narrow_states(root / "narrow", out)
        from devtools.tool_shots import run_tool_states

        await run_tool_states(root / "tool-states", out)
    return 0


def _write_mcp_json(data: Path) -> None:
    server = Path(__file__).resolve().parents[1] / "tests" / "support" / "mcp_server.py"
    data.mkdir(parents=True)
    entry = {"command": sys.executable, "args": [str(server)], "env": {"MCP_NOTES": "/dev/null"}}
    (data / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": entry}}))


async def _run_mcp_states(data: Path, out: Path) -> None:
    """A real stdio MCP server from mcp.json: its card asking, then Settings › Tools."""
    _write_mcp_json(data)
    call = ToolCall("call_1", "notes__note", {"text": "Buy oat milk"})
    model = _Scripted("Added to your groceries.", calls=(call,))
    window = await _window(data, model)
    window.composer.setPlainText("Put oat milk on my groceries list")
    window.send_button.click()
    await _until(lambda: window.approval_label.isVisible(), 20)
    await _shot(window, out / "tool-approval.png")
    dialog = window.open_tool_settings()
    await _until(lambda: dialog.toolsPage.is_loaded)
    dialog.toolsPage.toolServerList.setCurrentRow(0)
    dialog.resize(900, 620)
    await asyncio.sleep(0.05)  # a picture, not synchronisation
    dialog.grab().save(str(out / "settings-tools.png"))
    print(f"wrote {out / 'settings-tools.png'}")
    dialog.tabs.setCurrentWidget(dialog.approvalSettings)
    await asyncio.sleep(0.05)
    dialog.grab().save(str(out / "settings-tool-approval.png"))
    print(f"wrote {out / 'settings-tool-approval.png'}")
    dialog.reject()
    await _close(window)


async def _run_version_states(data: Path, out: Path) -> None:
    """A conversation with two versions of an answer, then its question being edited."""
    from ui.controller import DB_FILE_NAME

    storage = SQLiteSessionStorage(data / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="s-versions", title="Backoff helper")
        question = UserMessage(content="Write a retry helper with exponential backoff")
        await storage.append("s-versions", "seed", question)
        await storage.append("s-versions", "seed", AssistantMessage(content=ANSWER[:400]))
        await storage.branch_from("s-versions", question.id)
        usage = Usage(input_tokens=180, output_tokens=312)
        second = AssistantMessage(content=ANSWER, model="llama3.1-8b", usage=usage)
        await storage.append("s-versions", "seed", second)
    finally:
        await storage.close()
    window = await _window(data, _Scripted("Done."))
    await _until(lambda: any(i.versions for i in window.transcript.model().items()))
    await _shot(window, out / "versions.png")
    window.transcript.flush()
    user = window.transcript.message_views()[0]
    user.open_editor()
    user.editor.setPlainText("Write a retry helper with exponential backoff and jitter")
    await asyncio.sleep(0.05)  # a picture, not synchronisation
    window.transcript.verticalScrollBar().setValue(0)
    window.grab().save(str(out / "edit-message.png"))
    print(f"wrote {out / 'edit-message.png'}")
    await _close(window)


async def _run_search_states(data: Path, out: Path) -> None:
    """``search``: the list's search finding message text (a hit on another version said),
    a hit opened and marked; ``find``: Ctrl+F in the open conversation."""
    from ui.controller import DB_FILE_NAME

    storage = SQLiteSessionStorage(data / DB_FILE_NAME)
    try:
        await storage.create_session(session_id="trip", title="Weekend in Oslo")
        await storage.append("trip", "seed", UserMessage(content="What should I pack for Oslo in March?"))
        await storage.append("trip", "seed", AssistantMessage(
            content="Layers. The **weather** in March swings between sleet and sun, so bring a "
            "waterproof shell, a warm mid-layer and shoes with grip."))
        await storage.create_session(session_id="garden", title="Tomato seedlings")
        q = UserMessage(content="When can the tomato seedlings go outside?")
        await storage.append("garden", "seed", q)
        await storage.append("garden", "seed", AssistantMessage(
            content="Once nights stay above 10 °C: watch the weather forecast for a week of mild nights."))
        await storage.branch_from("garden", q.id)
        await storage.append("garden", "seed", AssistantMessage(content="After the last frost, usually mid-May."))
        await storage.create_session(session_id="zh", title="北京出差")
        await storage.append("zh", "seed", UserMessage(content="下周去北京，天气怎么样？要带什么衣服？"))
        await storage.append("zh", "seed", AssistantMessage(content="下周北京天气晴朗，早晚偏凉，带一件薄外套。"))
    finally:
        await storage.close()
    window = await _window(data, _Scripted("Done."))
    window.session_filter.setText("weather")
    window.search.flush()
    await _until(lambda: window.search.searched == "weather")
    window.search_results.choose_row(0)
    await _until(lambda: window.transcript.marked_view() is not None)
    await _shot(window, out / "search.png")
    window.session_filter.clear()
    await window.controller.open_session("zh")
    window.search.open_find()
    window.find_bar.field.setText("天气")
    window.find_bar.flush()
    await _until(lambda: window.find_bar.count.text() not in ("", "No matches"))
    await _until(lambda: window.transcript.marked_view() is not None)
    await _shot(window, out / "find.png")
    await _close(window)


async def _run_list_states(data: Path, out: Path) -> None:
    """``session-groups`` (dated sections, a conversation waiting for Resume, the reading
    column centred on a wide window), ``filter-no-matches`` and ``about``."""
    import sqlite3
    import time

    from ui.common.theme import apply_palette
    from ui.controller import DB_FILE_NAME

    apply_palette(QApplication.instance(), "light")  # type: ignore[arg-type]
    day = 86400.0
    now = time.time()
    rows = [
        ("s-today", "Backoff helper", 0.0, True),
        ("s-today-2", "Dinner ideas for six", 0.0, False),
        ("s-yesterday", "Quarterly report outline", 1 * day, False),
        ("s-week", "Rust lifetimes explained", 4 * day, True),
        ("s-old", "Trip to Lisbon", 40 * day, False),
        ("s-older", "Sourdough starter", 75 * day, False),
    ]
    for sid, title, _age, cut in reversed(rows):
        messages: list[Any] = [UserMessage(content=f"About {title.lower()}")]
        if cut:
            stop = StopInfo(StopReason.INTERRUPTED, raw="network_error", message="Cut off.")
            messages.append(AssistantMessage(content=ANSWER[:200], stop=stop))
        else:
            messages.append(AssistantMessage(content=ANSWER[:400]))
        await _seed(data, sid, title, messages)
    with sqlite3.connect(data / DB_FILE_NAME) as db:  # the dates the sections show
        for sid, _title, age, _cut in rows:
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now - age, sid))
    window = await _window(data, _Scripted("Done."))
    window.resize(1700, 760)
    await _until(
        lambda: (
            window.controller.sessions.is_waiting("s-week")
            and window.controller.sessions.is_waiting("s-today")
        )
    )
    await _shot(window, out / "session-groups.png")
    window.session_filter.setText("zebra")
    await _shot(window, out / "filter-no-matches.png")
    window.session_filter.clear()
    dialog = window.open_about()
    await dialog.wait_read()
    await asyncio.sleep(0.05)  # a picture, not synchronisation
    dialog.grab().save(str(out / "about.png"))
    print(f"wrote {out / 'about.png'}")
    dialog.reject()
    await _close(window)


async def _run_narrow_states(data: Path, out: Path) -> None:
    """``narrow-640`` (a 640x480 window: the rows reflow, the list gives way),
    ``narrow-folded`` (narrower: the list folded behind the header's button), their Chinese
    ``-zh`` twins, and ``empty-list-zh`` (the first start's hint, in Chinese)."""
    from ui.common.i18n import install_translator
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_palette(app, "light")
    tool = "notes__search_every_file_for_a_pattern"
    call = ToolCall("call_1", tool, {"pattern": "backoff", "folder": "~/notes"})
    usage = Usage(input_tokens=1834, output_tokens=412)
    model = "llama3.1-8b-instruct-q4_K_M"
    await _seed(
        data,
        "s-narrow",
        "Backoff helper",
        [
            UserMessage(content="Where did I write about backoff? Show me a helper."),
            AssistantMessage(content="Let me look.", tool_calls=(call,), model=model, usage=usage),
            ToolMessage(tool_call_id="call_1", name=tool, content="notes/2026-03.md: 'backoff'"),
            AssistantMessage(
                content="Wrap the call in `asyncio.wait_for(fetch_page(url), timeout=30)` and "
                "double the wait after each failure.",
                model=model,
                usage=usage,
            ),
        ],
    )
    for language, suffix in (("en", ""), ("zh_CN", "-zh")):
        install_translator(app, language)
        window = await _window(data, _Scripted("Done."))
        await _until(lambda window=window: len(window.transcript.views()) == 4)
        window.resize(640, 480)
        await _until(lambda window=window: window.width() == 640)
        await _shot(window, out / f"narrow-640{suffix}.png")
        window.resize(520, 480)
        await _until(lambda window=window: not window.sidebar.isVisible())
        await _shot(window, out / f"narrow-folded{suffix}.png")
        await _close(window)
    window = await _window(data.parent / "empty-zh", _Scripted("Done."))
    await _until(lambda: window.session_list.empty_label.isVisible())
    await _shot(window, out / "empty-list-zh.png")
    await _close(window)
    install_translator(app, "en")


async def _run_scaled(out: Path) -> int:
    """The ``scaled-200`` shot; run in a process started at 200% (see `_scaled_shot`)."""
    from ui.common.theme import apply_palette

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_palette(app, "light")
    await _warm()
    call = ToolCall("call_1", "search_files", {"pattern": "backoff", "folder": "~/notes"})
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "scaled"
        await _seed(
            data,
            "s-scaled",
            "Backoff helper",
            [
                UserMessage(content="Where did I write about backoff? Show me a helper."),
                AssistantMessage(content="Let me look that up.", tool_calls=(call,)),
                ToolMessage(
                    tool_call_id="call_1",
                    name="search_files",
                    content="notes/2026-03.md: 'backoff'",
                ),
                AssistantMessage(content=ANSWER + " sees what went wrong."),
            ],
        )
        window = await _window(data, _Scripted("Done."), maximised=True)
        await _until(lambda: len(window.transcript.views()) == 4)
        await _shot(window, out / "scaled-200.png")
        await _close(window)
    return 0


def _scaled_shot(out: Path) -> int:
    """Take ``scaled-200.png`` in a new process at 200% on a 1920x1080 offscreen screen."""
    width, height = SCALED_SCREEN
    screen = {"name": "screen", "x": 0, "y": 0, "width": width, "height": height}
    screen.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "screen.json"
        config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
        env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}")
        env["QT_SCALE_FACTOR"] = "2"
        done = subprocess.run(
            [sys.executable, "-m", "devtools.screenshots", "--scaled", str(out)],
            env=env,
            timeout=180,
        )
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    """Write the screenshots into the folder given on the command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    scaled = "--scaled" in args
    if scaled:
        args.remove("--scaled")
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from ui.app import EventLoop

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:  # type: ignore[arg-type]
        if scaled:
            return runner.run(_run_scaled(out))
        code = runner.run(_run(out))
    return code or _scaled_shot(out)


if __name__ == "__main__":
    sys.exit(main())

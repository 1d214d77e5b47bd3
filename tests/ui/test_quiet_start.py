"""A start prints no Qt warnings: a real ``python -m ui`` offscreen, its stderr read whole.

The conversation that reopens holds every kind of row the transcript draws (a question, an
answer, a resume notice, a redone answer), since a layout warning comes from building a row
(the notice's divider once printed ``QBoxLayout::insert: index 2 out of range (max: 1)`` at
every start).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

from engine import AssistantMessage, ResumeKind, SQLiteSessionStorage, StopInfo, UserMessage
from engine.resume import resume_notice
from engine.stop import StopReason
from tests.ui.conftest import app_env
from ui.controller import DB_FILE_NAME

ROOT = Path(__file__).resolve().parents[2]

#: lines Qt writes when a widget or layout is misused
QT_WARNING = re.compile(
    r"^(QBoxLayout|QLayout|QGridLayout|QFormLayout|QWidget|QObject|QPainter)\S*:"
)
#: what the offscreen platform itself says, with no meaning on a real display
OFFSCREEN_ONLY = "This plugin does not support propagateSizeHints()"


async def _seed(data_dir: Path) -> None:
    storage = SQLiteSessionStorage(data_dir / DB_FILE_NAME)
    cut = StopInfo(StopReason.INTERRUPTED, raw="network_error", message="cut")
    notice = resume_notice(ResumeKind.RETRY_RESPONSE)
    assert notice is not None
    try:
        await storage.create_session(session_id="s", title="Every kind of row")
        for message in (
            UserMessage(content="Tell me a story."),
            AssistantMessage(content="Once upon", stop=cut),
            notice,
            AssistantMessage(content="Once upon a time, to the end."),
        ):
            await storage.append("s", "seed", message)
    finally:
        await storage.close()


async def test_a_start_prints_no_qt_warnings(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    await _seed(data)
    script = tmp_path / "start.smoke"
    script.write_text("painted\nwait-shown to the end\nquit 0\n", encoding="utf-8")
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "ui", "--data-dir", str(data), "--smoke-script", str(script)],
        cwd=ROOT,
        env=app_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SMOKE shown to the end" in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip() != OFFSCREEN_ONLY]
    assert [line for line in lines if QT_WARNING.match(line)] == []
    assert lines == [], "a start writes nothing on stderr"

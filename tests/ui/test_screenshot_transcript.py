"""`make screenshots` renders the transcript's states (issue 20: a stopped answer's row, the
focused message's frame and menu, Ctrl+F in a tall message, lists and tables) as real
images of the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from devtools.screenshots_transcript import run_transcript_states

STATES = (
    "stopped-answer",
    "message-focus",
    "message-menu",
    "find-tall-message",
    "lists-and-tables",
)


async def test_the_transcript_states_render(tmp_path: Path) -> None:
    await run_transcript_states(tmp_path / "data", tmp_path)
    for name in STATES:
        image = QImage(str(tmp_path / f"{name}.png"))
        assert not image.isNull(), name
        least = 100 if name == "message-menu" else 300  # the menu is shot on its own
        assert image.width() >= least and image.height() >= 60, (name, image.size())

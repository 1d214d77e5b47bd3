"""Huge or many tool calls through the real window: it stays alive.

A model (the loopback provider, in its own process as a real one is) answers with:

- 10,000 tool calls in one answer: the first `MAX_TOOL_CALLS_PER_ANSWER` run (an app tool
  that answers at once), the rest are answered "not run: too many calls in one answer" in one
  write and fold into one row; then the final answer. (Before the cap: more than five
  minutes frozen, 1.5 GB, nothing stored.)
- one call whose arguments are 1 MB: its card shows their beginning. (Before the fold: 34 s
  frozen, the card 51 s after the stream ended.)

Each is timed from Send to the request's end, with the longest gap of a 5 ms timer heartbeat
(the longest event-loop stall; target under 100 ms) and the growth of the process's peak
memory. The baseline, measured the same way in the same run, is an answer with one small
call: the figures are printed as ratios to it.
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
STALL_TARGET = 0.1  # seconds

_SERVER = """
import json, sys
from tests.support.provider_server import ProviderServer, ScriptedCall, Turn
case = sys.argv[1]
if case == "many":
    calls = [ScriptedCall("lookup", {"q": str(n)}, id=f"c{n}") for n in range(10_000)]
elif case == "huge":
    calls = [ScriptedCall("lookup", {"q": "x" * 1_000_000}, id="c0")]
else:
    calls = [ScriptedCall("lookup", {"q": "one"}, id="c0")]
# One SSE event per call name and one per argument piece: pieces of 64 KB, as a fast server.
first = Turn(tool_calls=calls, chunk_size=65536)
with ProviderServer() as server:
    server.script(first, Turn(text="Done."))
    print(server.openai_url, flush=True)
    sys.stdin.read()
"""


def _lookup(q: str) -> str:
    """Look a word up."""
    return "found"


def _peak_rss() -> int:
    """This process's peak resident memory, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def _answer(case: str) -> dict[str, float]:
    """Send one message whose answer is ``case``; time it and watch the loop."""
    from PySide6.QtCore import QTimer

    from ui.app import build_window, settle_after_start
    from ui.conversation.items import ItemKind
    from ui.settings.store import ProviderConfig, Settings, SettingsStore

    with (
        tempfile.TemporaryDirectory() as tmp,
        subprocess.Popen(  # noqa: ASYNC220 (only starts it; the reads go through a thread)
            [sys.executable, "-c", _SERVER, case],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as server,
    ):
        assert server.stdout is not None and server.stdin is not None
        url = await asyncio.to_thread(server.stdout.readline)
        data = Path(tmp)
        store = SettingsStore(data, use_keychain=False)
        config = ProviderConfig("loop", "openai", "Loopback", url.strip(), "loopback-echo")
        await store.save(Settings(providers=[config], default_provider_id="loop"))
        window = build_window(data, settings_store=store, first_run_dialog=False, tools=[_lookup])
        window.resize(1100, 760)
        window.show()
        await window.started()
        await settle_after_start(window)
        gaps: list[float] = []
        last = [time.perf_counter()]

        def beat() -> None:
            now = time.perf_counter()
            gaps.append(now - last[0])
            last[0] = now

        timer = QTimer()
        timer.setInterval(5)
        timer.timeout.connect(beat)
        memory = _peak_rss()
        started = time.perf_counter()
        request = window.controller.send("Look everything up")
        last[0] = time.perf_counter()
        timer.start()
        assert request is not None
        await request
        window.transcript.flush()
        window.repaint()
        duration = time.perf_counter() - started
        timer.stop()
        items = window.transcript.model().items()
        cards = [i for i in items if i.kind is ItemKind.TOOL]
        folded = [i for i in items if i.kind is ItemKind.FOLDED_CALLS]
        assert cards and items[-1].text == "Done.", "the answer came to its end"
        server.stdin.close()
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        window.close()
        await closed.wait()
    return {
        "seconds": duration,
        "stall": max(gaps, default=0.0),
        "memory": max(0, _peak_rss() - memory),
        "cards": len(cards),
        "folded": sum(i.folded_total for i in folded),
    }


def main() -> list[str]:
    """Print the figures; return the targets missed."""
    from PySide6.QtWidgets import QApplication

    from ui.app import EventLoop

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # type: ignore[union-attr]
    missed: list[str] = []
    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:  # type: ignore[arg-type]
        base = runner.run(_answer("one"))
        huge = runner.run(_answer("huge"))  # before "many": each peak is its own growth
        many = runner.run(_answer("many"))
    print(
        f"baseline, one small call: {base['seconds'] * 1000:.0f} ms from Send to the end, "
        f"longest stall {base['stall'] * 1000:.1f} ms"
    )
    for name, figures, what in (
        ("10,000 calls in one answer", many, f"{many['cards']} cards, {many['folded']:,} folded"),
        ("one call with 1 MB of arguments", huge, "its card folded"),
    ):
        stall = figures["stall"]
        print(
            f"{name} ({what}): {figures['seconds']:.2f} s from Send to the end "
            f"({figures['seconds'] / base['seconds']:.1f}x the baseline), longest event-loop "
            f"stall {stall * 1000:.1f} ms ({stall / max(base['stall'], 1e-3):.1f}x; target < "
            f"{STALL_TARGET * 1000:.0f} ms), peak memory +{figures['memory'] / 2**20:.0f} MB"
        )
        if stall >= STALL_TARGET:
            missed.append(f"{name}: longest stall {stall * 1000:.0f} ms (target 100 ms)")
    return missed


if __name__ == "__main__":
    sys.exit(1 if main() else 0)

"""Review finding: Ctrl-C in a script using `SyncAgent` is its Stop.

Before, the KeyboardInterrupt left the request running on the agent's loop thread: nothing of
the partial answer was stored and the session stayed busy, so the script could not resume.
Now the request is cancelled there too and the interrupt is re-raised once it has stored the
partial (stop interrupted, raw ``cancelled``) and released the lease.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from engine import AssistantMessage
from tests.support.wait import read_line_sync

ROOT = Path(__file__).resolve().parents[2]


def interrupt_child(db: Path) -> tuple[int, str, str]:
    """Run the script, press Ctrl-C (SIGINT) once the partial has streamed, collect output."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.engine.review_sigint_child", str(db)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line_sync(child.stdout, "the partial to stream") == "ready\n"
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    return child.returncode, out, err


async def test_ctrl_c_in_a_sync_agent_script_stores_the_partial_and_frees_the_session(store):
    returncode, out, err = interrupt_child(store.path)
    assert returncode == 0, err
    assert out.splitlines() == [
        "interrupted",
        "point retry_response",
        "resumed Whole answer.",
    ]
    history = await store.history()
    partial = history[1]
    assert isinstance(partial, AssistantMessage) and partial.content == "Partial "
    assert partial.stop is not None and partial.stop.raw == "cancelled"
    assert history[-1].content == "Whole answer."

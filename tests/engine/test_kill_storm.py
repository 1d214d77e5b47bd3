"""The kill storm: a mixed workload on one file, SIGKILLed at seeded instants, checked after
each kill as the kill left the file (plain SQL, before anything opens it again).

A child (`tests.engine.storm_child`) runs two conversations at once — send, tools, regenerate,
edit, switch, import, and Resume after each kill — and tells every event over its stdout. A
third of the kills land just after an event of a seeded kind (a request or a model step
starting, a message committed, a tool starting, an import starting, a switch), so the short
windows between two writes are hit; the others at a seeded random instant. After each kill:

* ``PRAGMA integrity_check`` and the search index's own integrity-check pass;
* every message the child saw committed is stored, under the parent it had;
* in every conversation, parents are earlier messages, the path starts at a root and follows
  parents to the active leaf, a conversation with messages never shows the empty path, and
  the path never ends above newer messages (the active leaf has no child);
* a draft's parent is a stored message;
* each import is whole or absent;
* text shown more than a second before the kill is stored (as the answer or its draft);
* no tool ran twice, and none ran without its start record;
* the next child's open had nothing to mend.

``make test`` runs 20 kills (seeded); ``make stress`` 200 per seed of ``STORM_SEEDS``
(comma-separated, default ``1``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the workload events a kill may be timed after
EVENTS = ("request", "step", "ack", "toolstart", "import", "switch")
#: how long a timed kill waits for its event before it kills anyway
EVENT_WAIT = 8.0
#: text shown this long before a kill must be on disk (drafts are saved 0.3 s apart)
DURABLE_AFTER = 1.0


@dataclass
class Lines:
    """The child's lines as they arrive, each with the (monotonic) time it was read."""

    lines: list[tuple[float, list[str]]] = field(default_factory=list)
    closed: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)

    def read(self, stream: IO[str]) -> None:
        for line in stream:
            if not line.endswith("\n"):
                break  # cut off by the kill: the child never finished saying it
            with self.changed:
                self.lines.append((time.monotonic(), line.split()))
                self.changed.notify_all()
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def wait_for(self, kind: str, nth: int, seconds: float) -> bool:
        """Wait until the ``nth`` line of ``kind`` arrived (True), the child's output closed,
        or ``seconds`` passed (False)."""
        deadline = time.monotonic() + seconds
        with self.changed:
            while True:
                if sum(1 for _t, words in self.lines if words and words[0] == kind) >= nth:
                    return True
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    return False
                self.changed.wait(left)


@dataclass
class Storm:
    db: Path
    side: Path
    work: Path
    acked: dict[str, str | None] = field(default_factory=dict)
    shown: dict[str, int] = field(default_factory=dict)  #: token -> chars that must be stored
    imports: dict[str, int] = field(default_factory=dict)
    imported: set[str] = field(default_factory=set)
    figures: Counter[str] = field(default_factory=Counter)

    def run_child(self, seed: str, rng: random.Random, timed: bool) -> None:
        log = self.work / "child.stderr"
        with log.open("w", encoding="utf-8") as errors:
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.engine.storm_child",
                    str(self.db),
                    str(self.side),
                    str(self.work),
                    seed,
                ],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            lines = Lines()
            reader = threading.Thread(target=lines.read, args=(child.stdout,), daemon=True)
            reader.start()
            try:
                assert lines.wait_for("ready", 1, 60), f"the child did not start: {_tail(log)}"
                ready = next(w for _t, w in lines.lines if w[0] == "ready")
                assert ready[1] == "0", f"opening the file mended {ready[1]} paths"
                if timed:
                    kind = rng.choice(EVENTS)
                    hit = lines.wait_for(kind, rng.randint(1, 3), EVENT_WAIT)
                    self.figures[f"timed after {kind}" if hit else f"{kind} not seen in time"] += 1
                else:
                    # A timer, not synchronisation: the instant of the kill is the test input.
                    with lines.changed:
                        lines.changed.wait_for(lambda: lines.closed, rng.uniform(0.05, 3.0))
                    self.figures["at a random instant"] += 1
                assert child.poll() is None, f"the child stopped by itself: {_tail(log)}"
                os.kill(child.pid, signal.SIGKILL)
                killed_at = time.monotonic()
                assert child.wait(30) == -signal.SIGKILL
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
                reader.join(30)
                child.stdout.close()  # type: ignore[union-attr]
        self.take(lines, killed_at)

    def take(self, lines: Lines, killed_at: float) -> None:
        """Note what the child said it did (and what must therefore be stored)."""
        for seen_at, words in lines.lines:
            kind = words[0] if words else ""
            self.figures[f"event {kind}"] += 1
            if kind == "ack":
                self.acked[words[2]] = None if words[3] == "-" else words[3]
            elif kind == "text" and seen_at <= killed_at - DURABLE_AFTER:
                self.shown[words[2]] = max(self.shown.get(words[2], 0), int(words[3]))
            elif kind == "import":
                self.imports[words[1]] = int(words[2])
            elif kind == "imported":
                self.imported.add(words[1])
            elif kind == "request":
                self.figures[f"request {words[2]}"] += 1

    def check(self) -> None:
        raw = sqlite3.connect(self.db, isolation_level=None)
        try:
            assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            raw.execute("INSERT INTO message_index(message_index, rank) VALUES('integrity-check', 1)")
            self._check_trees(raw)
            self._check_acked(raw)
            self._check_text(raw)
            for cid, count in self.imports.items():
                stored = raw.execute(
                    "SELECT COUNT(*) FROM messages WHERE session_id = ?", (cid,)
                ).fetchone()[0]
                assert stored in ((count,) if cid in self.imported else (0, count)), (cid, stored)
            runs = self.side.read_text(encoding="utf-8").split() if self.side.exists() else []
            twice = [call for call, n in Counter(runs).items() if n > 1]
            assert not twice, f"tools ran twice: {twice}"
            started = {row[0] for row in raw.execute("SELECT tool_call_id FROM tool_starts")}
            assert set(runs) <= started, f"ran without a start record: {set(runs) - started}"
            self.figures["tool runs"] = len(runs)
        finally:
            raw.close()

    def _check_trees(self, raw: sqlite3.Connection) -> None:
        sessions = raw.execute("SELECT id, active_seq FROM sessions").fetchall()
        for sid, active in sessions:
            rows = raw.execute(
                "SELECT seq, parent_seq FROM messages WHERE session_id = ?", (sid,)
            ).fetchall()
            parents = dict(rows)
            for seq, parent in rows:
                assert parent is None or (parent in parents and parent < seq), (sid, seq, parent)
            if not rows:
                continue
            assert active is not None, f"{sid}: messages, but the empty path"
            assert active in parents, f"{sid}: the active leaf {active} is not stored"
            assert active not in set(parents.values()), f"{sid}: the path ends above newer ones"
            at, steps = active, 0
            while at is not None:  # up to a root (parents are earlier: this ends)
                at, steps = parents[at], steps + 1
            self.figures["longest path"] = max(self.figures["longest path"], steps)
        for sid, parent in raw.execute("SELECT session_id, parent_seq FROM drafts"):
            if parent is not None:
                found = raw.execute(
                    "SELECT 1 FROM messages WHERE session_id = ? AND seq = ?", (sid, parent)
                ).fetchone()
                assert found, f"{sid}: a draft under a message that is not stored"

    def _check_acked(self, raw: sqlite3.Connection) -> None:
        stored = dict(
            raw.execute(
                "SELECT m.id, p.id FROM messages m LEFT JOIN messages p "
                "ON p.session_id = m.session_id AND p.seq = m.parent_seq"
            ).fetchall()
        )
        for mid, parent in self.acked.items():
            assert mid in stored, f"the acknowledged message {mid} is lost"
            assert stored[mid] == parent, f"{mid} moved from under {parent} to {stored[mid]}"

    def _check_text(self, raw: sqlite3.Connection) -> None:
        have: dict[str, int] = {}
        bodies = [
            *raw.execute("SELECT body FROM messages WHERE type = 'assistant'"),
            *raw.execute("SELECT body FROM drafts"),
        ]
        for (body,) in bodies:
            content = json.loads(body).get("content") or ""
            if content.startswith("«") and "»" in content:
                token = content.split("»", 1)[0] + "»"
                have[token] = max(have.get(token, 0), len(content))
        for token, chars in self.shown.items():
            assert have.get(token, 0) >= chars, (
                f"the answer {token} showed {chars} characters more than a second before a "
                f"kill; {have.get(token, 0)} are stored"
            )


def _is_timing(figure: str) -> bool:
    return figure.startswith(("timed after", "at a random")) or figure.endswith("in time")


def _tail(log: Path) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-3000:]


def storm(folder: Path, seed: int, kills: int) -> Counter[str]:
    work = folder / "work"
    work.mkdir()
    state = Storm(folder / "storm.sqlite3", folder / "tool-runs.txt", work)
    rng = random.Random(seed)
    for number in range(kills):
        before = Counter(state.figures)
        try:
            state.run_child(f"{seed}{number:04d}", rng, timed=number % 3 == 0)
            state.check()
        except AssertionError as exc:
            how = [k for k in state.figures if state.figures[k] > before[k] and _is_timing(k)]
            raise AssertionError(f"kill {number + 1} of seed {seed} {how}: {exc}") from exc
        state.figures["kills"] += 1
    return state.figures


@pytest.mark.timeout(900)
def test_a_short_kill_storm_keeps_every_conversation_whole(tmp_path: Path) -> None:
    figures = storm(tmp_path, seed=23, kills=20)
    print("\nkill storm, seed 23:", dict(sorted(figures.items())))
    assert figures["kills"] == 20
    assert figures["event ack"] > 0 and figures["event text"] > 0


@pytest.mark.stress
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("seed", [int(s) for s in os.environ.get("STORM_SEEDS", "1").split(",")])
def test_the_kill_storm_keeps_every_conversation_whole(tmp_path: Path, seed: int) -> None:
    figures = storm(tmp_path, seed=seed, kills=200)
    print(f"\nkill storm, seed {seed}:", dict(sorted(figures.items())))
    assert figures["kills"] == 200

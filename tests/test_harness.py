"""The harness itself: a failing test is named in the summary, whatever way it fails.

A failure in tests/engine/test_tool_start_crash.py was reported as a pytest INTERNALERROR
through the Hypothesis plugin's hook, the test's name lost (issue 18). This runs pytest in a
child process with this project's configuration (`pyproject.toml`: its plugins, pytest-timeout
and asyncio mode among them) over a small module that fails the ways those tests can: an
assertion after a child was SIGKILLed, an await that never ends and a pipe read that never
returns (both ended by pytest-timeout from its signal handler), with a Hypothesis test in the
same session so that plugin's hooks run for every test. Each failure must be named, the run
must go on to the tests after them and end with its summary, and there is no INTERNALERROR.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODULE = textwrap.dedent(
    '''
    import asyncio
    import os
    import signal
    import subprocess
    import sys

    import pytest
    from hypothesis import given, strategies as st

    SLEEPER = [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"]


    @given(st.integers())
    def test_hypothesis_runs_in_the_same_session(n):
        assert n == n


    @pytest.mark.timeout(60)
    async def test_fails_after_a_sigkill():
        proc = subprocess.Popen(SLEEPER, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(30) == -signal.SIGKILL
        finally:
            proc.kill()
            proc.wait(30)
            proc.stdout.close()
        assert False, "DELIBERATE: after the kill"


    @pytest.mark.timeout(2)
    async def test_an_await_that_never_ends():
        await asyncio.Event().wait()


    @pytest.mark.timeout(2)
    async def test_a_pipe_read_that_never_returns():
        proc = subprocess.Popen(SLEEPER, stdout=subprocess.PIPE, text=True)
        try:
            for line in proc.stdout:  # "ready", then nothing: blocks in the loop's thread
                pass
        finally:
            proc.kill()
            proc.wait(30)
            proc.stdout.close()


    def test_after_the_failures():
        pass
    '''
)

FAILING = (
    "test_fails_after_a_sigkill",
    "test_an_await_that_never_ends",
    "test_a_pipe_read_that_never_returns",
)


def test_every_failure_is_named_and_the_run_ends_with_its_summary(tmp_path: Path) -> None:
    module = tmp_path / "test_shapes.py"
    module.write_text(MODULE, encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-q",
            str(module),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,  # ends a hang of the whole run; it takes a few seconds
    )
    out = run.stdout + run.stderr
    assert "INTERNALERROR" not in out, out
    assert run.returncode == 1, out
    for name in FAILING:
        assert f"FAILED test_shapes.py::{name}" in out, out
    assert "3 failed, 2 passed" in out, out

"""The bundle smoke test's parts, run against the source app (``python -m ui``).

packaging/smoke.sh is the same script CI runs against the built bundle: here it drives the
source run, so a change that breaks the smoke chain (the window's objectNames, the smoke
runner, the loopback script, Resume after SIGKILL) fails `make test` without a bundle build.
Everything is real: the app and the provider server are subprocesses, the kill is SIGKILL.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "packaging" / "smoke.sh"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env.update(extra)
    return env


def _smoke_sh(timeout: float = 110, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run packaging/smoke.sh against the source app, ``extra`` in its environment."""
    env = _env(**{"SMOKE_APP": f"{sys.executable} -m ui", "SMOKE_PYTHON": sys.executable, **extra})
    return subprocess.run(
        ["bash", str(SMOKE)], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def _app(data_dir: Path, script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ui", "--data-dir", str(data_dir), "--smoke-script", str(script)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_smoke_sh_kills_the_source_app_mid_answer_and_resume_completes() -> None:
    result = _smoke_sh()
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "first answer stored, second answer on screen" in out
    # The Resume tooltip is the engine's one-sentence description of a kill mid-stream.
    assert "SMOKE resume-offered The model never answered the last message" in out
    assert "SMOKE-CHECK ok: both answers stored once, the second one through Resume" in out
    assert out.rstrip().endswith("smoke: OK")


def test_smoke_sh_fails_when_the_app_does_not_start(tmp_path: Path) -> None:
    broken = tmp_path / "broken-app"
    broken.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n")
    broken.chmod(0o755)
    result = _smoke_sh(timeout=60, SMOKE_APP=str(broken), SMOKE_TIMEOUT="30")
    assert result.returncode == 1
    assert "FAILED: first start: the process exited before it got there" in result.stderr
    assert "cannot start" in result.stderr  # the app's own output is shown for diagnosis


def test_a_failing_step_exits_the_app_with_status_1_and_says_what_it_waited_for(
    tmp_path: Path,
) -> None:
    script = tmp_path / "expects-resume.smoke"
    script.write_text("painted\ntimeout 1\nwait-resume\nquit 0\n")
    result = _app(tmp_path / "data", script)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "SMOKE painted"
    assert lines[-1].startswith("SMOKE FAIL waited 1s for the Resume button to be shown")


def test_an_unknown_step_is_refused_before_anything_runs(tmp_path: Path) -> None:
    script = tmp_path / "typo.smoke"
    script.write_text("# a comment\n\npainted\nsned hello\n")
    result = _app(tmp_path / "data", script)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "SMOKE FAIL line 4: unknown step 'sned'; known steps: painted, timeout, send, "
        "wait-shown, wait-stored, wait-resume, expect-no-resume, wait-visible, expect-icon, "
        "wait-activated, click, mark, screenshot, hold, quit "
        "(no error shown)"
    ]


def test_quit_sets_the_exit_status(tmp_path: Path) -> None:
    script = tmp_path / "quit.smoke"
    script.write_text("painted\nexpect-no-resume\nmark checked\nquit 7\n")
    result = _app(tmp_path / "data", script)
    assert result.returncode == 7
    assert result.stdout.splitlines() == [
        "SMOKE painted",
        "SMOKE no-resume",
        "SMOKE checked",
        "SMOKE quit 7",
    ]


@pytest.mark.stress
@pytest.mark.timeout(900)
def test_smoke_sh_passes_twenty_times_in_a_row() -> None:
    """The kill -9 / Resume cycle is not flaky: each round a fresh data folder and server."""
    for round_number in range(20):
        result = _smoke_sh()
        assert result.returncode == 0, f"round {round_number}:\n{result.stdout}{result.stderr}"

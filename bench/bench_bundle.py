"""Bundle benchmarks: the PyInstaller bundle's size on disk and its start-to-first-paint time.

Targets (issue: packaging): dist/Continuo/ under 200 MB on disk; the bundle starts within
1.5x of the source run (``python -m ui``), both measured here in the same run.

Start-to-first-paint is the wall time from spawning the process to the ``SMOKE painted``
line of the smoke script ``packaging/smoke/paint.smoke``: interpreter start, imports, the
QApplication, the window built, shown, its (empty) conversation list loaded and a paint
delivered to it (see `ui.smoke`). Offscreen, on a fresh data folder each time; the first
start of each kind warms the file cache and is not counted; then the two kinds alternate so
that neither gets a quieter machine.

The bundle is built (``packaging/build.sh``, about a minute) when dist/Continuo/ is missing
or ``BENCH_BUNDLE_REBUILD=1``; otherwise the existing one is measured.
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUNDLE = REPO / "dist" / "Continuo"
EXECUTABLE = BUNDLE / "continuo"
PAINT_SCRIPT = REPO / "packaging" / "smoke" / "paint.smoke"

SIZE_TARGET_MB = 200.0
START_RATIO_TARGET = 1.5
ROUNDS = 7  #: counted starts of each kind
START_TIMEOUT = 60.0  #: seconds one start may take before it counts as a failure

MB = 1024 * 1024


def disk_usage(folder: Path) -> int:
    """Bytes the folder's files take on disk (allocated blocks, like ``du``)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(root, name))
            total += st.st_blocks * 512
    return total


def runtime_packages_size(dist_name: str = "continuo") -> int:
    """Bytes the source install's runtime packages take in this venv (the app's dependency
    closure, extras excluded): what a source run loads its code from, for comparison."""
    seen: set[str] = set()
    todo = [dist_name]
    total = 0
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                total += path.stat().st_blocks * 512
        for requirement in dist.requires or ():
            if "extra ==" in requirement:
                continue
            base = requirement.split(";")[0].strip()
            for sep in "<>=!~[ (":
                base = base.split(sep)[0]
            todo.append(base)
    return total


def time_to_paint(command: list[str]) -> float:
    """Seconds from spawning `command` to its ``SMOKE painted`` line; it must then exit 0."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # never the real keychain
    with tempfile.TemporaryDirectory(prefix="continuo-bench-") as data:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*command, "--data-dir", data, "--smoke-script", str(PAINT_SCRIPT)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdout is not None
            painted = None
            deadline = start + START_TIMEOUT
            while painted is None:
                remaining = deadline - time.perf_counter()
                ready, _, _ = select.select([proc.stdout], [], [], max(0.0, remaining))
                if not ready:
                    raise RuntimeError(f"{command[0]} did not paint within {START_TIMEOUT:g}s")
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"{command[0]} exited before it painted")
                if line.startswith("SMOKE painted"):
                    painted = time.perf_counter() - start
                elif line.startswith("SMOKE FAIL"):
                    raise RuntimeError(f"{command[0]}: {line.strip()}")
            proc.stdout.read()
            code = proc.wait(timeout=START_TIMEOUT)
            if code != 0:
                raise RuntimeError(f"{command[0]} exited with status {code} after painting")
            return painted
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _ensure_bundle() -> str | None:
    """Build the bundle if needed; return why it could not be, or None."""
    if EXECUTABLE.exists() and os.environ.get("BENCH_BUNDLE_REBUILD") != "1":
        print(f"measuring the existing bundle {BUNDLE} (BENCH_BUNDLE_REBUILD=1 rebuilds it)")
        built = EXECUTABLE.stat().st_mtime
        newer = [
            p
            for folder in ("engine", "ui")
            for p in (REPO / folder).rglob("*.py")
            if p.stat().st_mtime > built
        ]
        if newer:
            print(
                f"note: {len(newer)} source files changed since it was built, e.g. "
                f"{newer[0].relative_to(REPO)}; its figures may not match the current code"
            )
        return None
    print("building the bundle (packaging/build.sh)...", flush=True)
    result = subprocess.run(
        ["bash", str(REPO / "packaging" / "build.sh")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if result.returncode != 0 or not EXECUTABLE.exists():
        print(result.stdout[-3000:])
        return "the bundle could not be built (packaging/build.sh failed; see above)"
    return None


def main() -> list[str]:
    problem = _ensure_bundle()
    if problem:
        return [problem]
    missed = []

    size = disk_usage(BUNDLE)
    source = runtime_packages_size()
    print(
        f"bundle size on disk: {size / MB:.1f} MB "
        f"({size / (SIZE_TARGET_MB * MB):.2f}x of the {SIZE_TARGET_MB:.0f} MB target; "
        f"{size / source:.2f}x the source install's runtime packages, {source / MB:.1f} MB)"
    )
    if size > SIZE_TARGET_MB * MB:
        missed.append(f"bundle is {size / MB:.1f} MB on disk, over {SIZE_TARGET_MB:.0f} MB")

    source_cmd = [sys.executable, "-m", "ui"]
    bundle_cmd = [str(EXECUTABLE)]
    from bench import compile_sources

    compile_sources()  # the source run gets .pyc files too, as the bundle has
    time_to_paint(source_cmd)  # warm-up: the file cache
    time_to_paint(bundle_cmd)
    source_times, bundle_times = [], []
    for _ in range(ROUNDS):
        source_times.append(time_to_paint(source_cmd))
        bundle_times.append(time_to_paint(bundle_cmd))
    source_median = statistics.median(source_times)
    bundle_median = statistics.median(bundle_times)
    ratio = bundle_median / source_median
    print(
        f"start to first paint, source run (python -m ui): median {source_median * 1000:.0f} ms "
        f"(min {min(source_times) * 1000:.0f}, max {max(source_times) * 1000:.0f}; baseline)"
    )
    print(
        f"start to first paint, bundle:                    median {bundle_median * 1000:.0f} ms "
        f"(min {min(bundle_times) * 1000:.0f}, max {max(bundle_times) * 1000:.0f}; "
        f"{ratio:.2f}x the source run, target <= {START_RATIO_TARGET}x)"
    )
    if ratio > START_RATIO_TARGET:
        missed.append(
            f"bundle starts in {bundle_median * 1000:.0f} ms, {ratio:.2f}x the source run's "
            f"{source_median * 1000:.0f} ms (target <= {START_RATIO_TARGET}x)"
        )
    return missed


if __name__ == "__main__":
    sys.exit(1 if main() else 0)

"""Benchmarks: `make bench` runs every `bench/bench_*.py` module's `main()`.

Each benchmark prints its figures with the ratio to a baseline measured in the same run and
returns a list of missed targets; `make bench` exits non-zero when any target is missed.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def compile_sources() -> None:
    """Byte-compile Continuo's own modules, as an installed copy or the bundle has them.

    pip and PyInstaller compile them; a checkout run with PYTHONDONTWRITEBYTECODE set would
    compile every module from source at every start, which no user's start does.
    """
    import compileall

    for package in ("ui", "engine"):
        compileall.compile_dir(ROOT / package, quiet=1)

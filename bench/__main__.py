"""Run every benchmark module (`bench/bench_*.py`) and fail when a target is missed."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import sys

import bench


def main(argv: list[str]) -> int:
    only = set(argv)
    missed: list[str] = []
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda i: i.name):
        if not info.name.startswith("bench_"):
            continue
        if only and info.name not in only and info.name.removeprefix("bench_") not in only:
            continue
        module = importlib.import_module(f"bench.{info.name}")
        print(f"\n== {info.name} ==", flush=True)
        result = module.main()
        if inspect.isawaitable(result):
            result = asyncio.run(result)
        missed.extend(f"{info.name}: {m}" for m in (result or []))
    print()
    if missed:
        print("Targets missed:")
        for line in missed:
            print(f"  - {line}")
        return 1
    print("All benchmark targets met.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

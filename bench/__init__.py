"""Benchmarks: `make bench` runs every `bench/bench_*.py` module's `main()`.

Each benchmark prints its figures with the ratio to a baseline measured in the same run and
returns a list of missed targets; `make bench` exits non-zero when any target is missed.
"""

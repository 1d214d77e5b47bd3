"""``python -m engine.archive import FILE``: import conversations from a terminal.

::

    python -m engine.archive import FILE [--data-dir DIR | --database FILE]

FILE is a Continuo JSON export or a ChatGPT data export (its ``.zip``, or its
``conversations.json``). The database is found as ``python -m engine.export`` finds it (and
created if missing). Prints what was imported, then one line per skipped conversation; an
error is one sentence on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..export import add_database_options, chosen_database, run_cli
from .importer import ImportReport, import_file

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine.archive",
        description="Import conversations into Continuo's conversation file.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "import", help="import a Continuo JSON export or a ChatGPT data export"
    )
    command.add_argument("file", metavar="FILE", help="the export to import")
    add_database_options(command)
    return parser


def describe(report: ImportReport, path: Path) -> str:
    """The report in a few lines: counts first, then each skipped conversation."""

    def n(count: int, what: str) -> str:
        return f"{count:,} {what}{'' if count == 1 else 's'}"

    lines = [
        f"Imported {n(report.imported, 'conversation')} ({n(report.messages, 'message')}) "
        f"from {path}; {report.already_present:,} already present, "
        f"{len(report.skipped):,} skipped."
    ]
    if report.pictures or report.pictures_missing:
        lines.append(
            f"{n(report.pictures, 'picture')} brought in; "
            f"{n(report.pictures_missing, 'picture')} not found in the file."
        )
    if report.placeholders:
        lines.append(
            f"{n(report.placeholders, 'part')} that could not be carried over (images, "
            "files) are marked in place."
        )
    lines += [f"Skipped {title!r}: {reason}" for title, reason in report.skipped]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return the exit status."""
    args = _parser().parse_args(argv)
    database = chosen_database(args)
    source = Path(args.file).expanduser()

    async def work() -> ImportReport:
        from ..storage.sqlite import SQLiteSessionStorage

        storage = SQLiteSessionStorage(database)
        try:
            return await import_file(storage, source)
        finally:
            await storage.close()

    return run_cli(work, lambda report: describe(report, source))


if __name__ == "__main__":
    sys.exit(main())

"""``python -m engine.export``: export conversations from a terminal, without the window.

::

    python -m engine.export --format {markdown,json,html} [--session ID ...]
                            [--data-dir DIR | --database FILE] OUT

The database is found the way the app finds it (`default_database`): ``--database``, else
``continuo.sqlite3`` in ``--data-dir``, else in ``$CONTINUO_DATA_DIR``, else in the
platform's user data folder (platformdirs, as ``ui.app`` does; Qt is never imported here).
A missing database is an error, not a new empty file. It prints one line saying what was
written; an error is one sentence on stderr (in the language of ``$LC_ALL``/``$LANG``) and
exit status 1, never a traceback.

`run_cli` is shared with ``python -m engine.archive import`` (`engine.archive.__main__`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from .archive.export import ExportFormat, export_conversations
from .errors import ArchiveError, ContinuoError
from .sentences import language_of

__all__ = [
    "APP_NAME",
    "DATABASE_FILE",
    "DATA_DIR_ENV",
    "add_database_options",
    "chosen_database",
    "default_database",
    "main",
    "run_cli",
]

#: the same names as ``ui.app`` and ``ui.controller`` (which the engine must not import)
APP_NAME = "Continuo"
DATA_DIR_ENV = "CONTINUO_DATA_DIR"
DATABASE_FILE = "continuo.sqlite3"

_T = TypeVar("_T")


def default_database(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The database the app uses: ``continuo.sqlite3`` in `data_dir`, else in
    ``$CONTINUO_DATA_DIR``, else in the platform's user data folder."""
    chosen = os.fspath(data_dir) if data_dir is not None else os.environ.get(DATA_DIR_ENV)
    if chosen:
        folder = Path(chosen).expanduser().resolve()
    else:
        from platformdirs import user_data_dir

        folder = Path(user_data_dir(APP_NAME, appauthor=False))
    return folder / DATABASE_FILE


def add_database_options(parser: argparse.ArgumentParser) -> None:
    """``--data-dir DIR | --database FILE``."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--data-dir",
        help=f"the app's data folder (default: ${DATA_DIR_ENV}, else the platform's user "
        "data folder)",
    )
    where.add_argument("--database", help=f"the conversation file itself ({DATABASE_FILE})")


def chosen_database(args: argparse.Namespace) -> Path:
    """The database `add_database_options` chose."""
    if args.database:
        return Path(args.database).expanduser()
    return default_database(args.data_dir)


def run_cli(work: Callable[[], Awaitable[_T]], report: Callable[[_T], str]) -> int:
    """Run `work` on a fresh event loop; print `report` of its result, or the error.

    Returns the exit status: 0, or 1 after an error (one sentence on stderr).
    """
    language = language_of(_locale())
    try:
        result = asyncio.run(_awaited(work))
    except ContinuoError as exc:
        print(exc.sentence(language), file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Stopped; nothing more was written.", file=sys.stderr)
        return 1
    print(report(result))
    return 0


async def _awaited(work: Callable[[], Awaitable[_T]]) -> _T:
    return await work()


def _locale() -> str | None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(name):
            return os.environ[name].split(".")[0]
    return None


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} bytes"
    value, unit = count / 1024, "KB"
    for bigger in ("MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:,.1f} {unit}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine.export",
        description="Export Continuo conversations to one Markdown, JSON or HTML file.",
    )
    parser.add_argument(
        "--format",
        required=True,
        choices=[f.value for f in ExportFormat],
        help="markdown and html hold the version of each conversation the app shows; json "
        "holds everything and can be imported again",
    )
    parser.add_argument(
        "--session",
        action="append",
        metavar="ID",
        help="export this conversation (repeat for several; default: every conversation)",
    )
    add_database_options(parser)
    parser.add_argument("out", metavar="OUT", help="the file to write (replaced whole)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return the exit status."""
    args = _parser().parse_args(argv)
    database = chosen_database(args)
    out = Path(args.out).expanduser()

    async def work() -> tuple[int, int, Path, int]:
        from .storage.sqlite import SQLiteSessionStorage

        if not database.is_file():
            raise ArchiveError(str(database), key="archive.no_database")
        storage = SQLiteSessionStorage(database)
        try:
            report = await export_conversations(storage, out, args.format, args.session)
        finally:
            await storage.close()
        return report.conversations, report.messages, report.path, report.bytes

    def said(result: tuple[int, int, Path, int]) -> str:
        conversations, messages, path, size = result
        return (
            f"Exported {conversations:,} conversation{'s' if conversations != 1 else ''} "
            f"({messages:,} message{'s' if messages != 1 else ''}) to {path} ({_size(size)})."
        )

    return run_cli(work, said)


if __name__ == "__main__":
    sys.exit(main())

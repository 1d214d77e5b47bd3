"""Durable conversation storage: one SQLite file, one transaction per message, leases, drafts.

`SQLiteSessionStorage` owns the file: a facade over parts composed around one core that holds
one writer connection and a few read connections (`engine.storage.sqlite` lists the parts);
`SQLiteSessionExtension` implements the agent's store contract (`engine.store.SessionStore`)
on it. See `engine.storage.migrations` for the schema and its versions, and
`engine.storage.drafts` for what a streaming step keeps on disk.
"""

from .extension import SQLiteSessionExtension
from .history import title_from
from .lease import Lease, LeaseHolder
from .search import SearchHit, TitleQuery, search_terms
from .sqlite import SessionInfo, SQLiteSessionStorage
from .tree import MendedPath

__all__ = [
    "Lease",
    "LeaseHolder",
    "MendedPath",
    "SQLiteSessionExtension",
    "SQLiteSessionStorage",
    "SearchHit",
    "SessionInfo",
    "TitleQuery",
    "search_terms",
    "title_from",
]

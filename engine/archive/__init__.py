"""Conversations in and out of the file: export (Markdown, JSON, HTML), import (Continuo's JSON,
ChatGPT's data export) and backup.

`export_conversations` writes conversations to one file (`engine.archive.export`);
`import_file` reads a Continuo export or a ChatGPT data export back in
(`engine.archive.importer`), each conversation handed to storage whole as an
`ImportedConversation` (`engine.archive.records`), keeping of its metadata only what
`IMPORT_KEEPS` names (an imported system prompt waits as `IMPORTED_SYSTEM_PROMPT` until the
person accepts it; see `engine.storage.transfer`). ``python -m engine.export`` and
``python -m engine.archive import`` do the same from a terminal.
"""

from ..storage.transfer import IMPORT_KEEPS, IMPORTED_SYSTEM_PROMPT, imported_metadata
from .export import ExportFormat, ExportProgress, ExportReport, export_conversations
from .importer import ImportProgress, ImportReport, import_file
from .records import ImportedConversation, ImportedMessage, ImportSkip

__all__ = [
    "IMPORTED_SYSTEM_PROMPT",
    "IMPORT_KEEPS",
    "ExportFormat",
    "ExportProgress",
    "ExportReport",
    "ImportProgress",
    "ImportReport",
    "ImportSkip",
    "ImportedConversation",
    "ImportedMessage",
    "export_conversations",
    "import_file",
    "imported_metadata",
]

"""Conversations in and out of the file: export (Markdown, JSON, HTML), import (Continuo's JSON,
ChatGPT's data export) and backup.
"""

from .records import ImportedConversation, ImportedMessage

__all__ = ["ImportedConversation", "ImportedMessage"]

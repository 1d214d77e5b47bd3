"""The search of every message (the conversation list's search field and its hits) and Ctrl+F's
find in the open conversation."""

"""What every part of the window shares: the window's errors and their words, the language, the
theme, Markdown, owned tasks, the data folder, the JSON file store, the dialogs' button row and
the list models' base."""

"""The main window's parts: the sidebar, the header, the reading column, the banners and
notices, the status line, the menus and dialogs, the file's full check."""

"""Continuo's window: PySide6 widgets and Qt models on a qasync event loop, over `engine`."""

"""The window's views: the transcript and its rows, and the composer."""

"""The conversations: the shown one, its pages and kept error, one request's life, the resume
point; the conversation list and the transcript (their models), the composer and the
transcript's row views."""

"""Qt item models over engine data: the conversation list and one conversation's transcript."""

"""The tool calls of one answer, made safe before anything is stored or asked.

A provider's ids and numbers are its words, not facts: a server or a proxy may send two calls
of one answer under one id, number calls ``call_0``, ``call_1``… afresh in every answer, or
ask for ten thousand calls at once. The agent (`engine._tools_run.ToolRunner.settle_calls`)
gives each call an id no other call of the conversation has (`unique_calls`: deterministic,
within what every provider takes back), and runs at most `MAX_TOOL_CALLS_PER_ANSWER` calls
of an answer, answering the rest with `TOO_MANY_TOOL_TEXT`.

No protocol needs a provider's own id again: each request carries the whole history, and
OpenAI Chat Completions, Anthropic Messages and Ollama match results to calls only within
it (Ollama, which has no ids, by order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from .messages import AssistantMessage, Message, ToolCall, ToolMessage

__all__ = ["MAX_TOOL_CALLS_PER_ANSWER", "TOO_MANY_TOOL_TEXT", "path_call_ids", "unique_calls"]

#: The most tool calls one answer (one model step) may have run. Models that call tools in
#: parallel ask for a handful at a time; a step asking for more is broken or hostile, and
#: each call may need the person's answer on its own card. The calls past it are answered
#: at once, together, with `TOO_MANY_TOOL_TEXT` (outcome `ToolOutcome.TOO_MANY`): none of
#: them runs, and the model reads why. 64 keeps a batch a person can still go through, and
#: its cards drawn in well under a second.
MAX_TOOL_CALLS_PER_ANSWER = 64

#: What the model reads for each call past `MAX_TOOL_CALLS_PER_ANSWER` (model text: the
#: same English whatever the host's language, like the other tool texts).
TOO_MANY_TOOL_TEXT = (
    f"Not run: too many calls in one answer. At most {MAX_TOOL_CALLS_PER_ANSWER} tool calls "
    "of one answer run; ask again for the ones still needed."
)

#: A tool call id every provider takes back: Anthropic's pattern, OpenAI's 40 characters.
_ID_REFUSED = re.compile(r"[^A-Za-z0-9_-]")
_ID_LENGTH = 40


def path_call_ids(messages: Sequence[Message]) -> set[str]:
    """The tool call ids a history already uses (asked for, or answered)."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            ids.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids


def unique_calls(calls: Sequence[ToolCall], taken: AbstractSet[str]) -> tuple[ToolCall, ...]:
    """``calls`` with ids unique among themselves and not in ``taken``.

    An id keeps its value when it can; otherwise characters a provider refuses become
    ``_``, it is cut to 40 characters, an empty one becomes ``call``, and a repeat gets the
    first free ``_2``, ``_3``… suffix — the same calls and history always give the same ids.
    """
    seen = set(taken)
    tried: dict[str, int] = {}  # the last suffix tried per base (repeats cost no rescans)
    out: list[ToolCall] = []
    for call in calls:
        base = _ID_REFUSED.sub("_", call.id)[:_ID_LENGTH] or "call"
        number = tried.get(base, 1)
        new = base if number == 1 else _numbered(base, number)
        while new in seen:
            number += 1
            new = _numbered(base, number)
        tried[base] = number
        seen.add(new)
        out.append(call if new == call.id else replace(call, id=new))
    return tuple(out)


def _numbered(base: str, number: int) -> str:
    suffix = f"_{number}"
    return base[: _ID_LENGTH - len(suffix)] + suffix

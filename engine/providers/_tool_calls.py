"""Tool calls assembled from a stream's fragments, for every adapter.

Each protocol sends a call in pieces keyed by a number of its own: OpenAI an ``index`` (or,
on some servers, only an id), Anthropic a content block, Ollama whole calls in order. The
adapter turns its numbering into an index and hands every piece to its parser's
`ToolCallAccumulator` (`_parsing.StreamParser.tools`), which announces it (`ModelEvent.tool_call_delta`) and, at the end, parses each call's
arguments into a `ToolCall` or says why they cannot be used.

This is assembly only. What a provider's ids and numbers are worth (unique ids across the
conversation, at most `engine.calls.MAX_TOOL_CALLS_PER_ANSWER` calls run) is ruled once in
`engine.calls`, by the agent, after the step is complete; a missing id becomes
``call_<index>`` here only so the step can be built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import ErrorAction, ProviderResponseError
from ..messages import ToolCall
from ..model import ModelEvent
from ..text import clean

__all__ = ["ToolCallAccumulator"]


@dataclass(slots=True)
class _Fragments:
    """What arrived of one call: its id and name (the first given wins) and its arguments."""

    id: str | None
    name: str | None
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Assembles tool calls from streamed fragments, keyed by the stream's index.

    A call is parsed as soon as the next one begins (its fragments are complete then, in
    every protocol's order), so an answer with thousands of calls costs little at its end,
    where the work would be one long stall of the host's loop; a fragment that arrives for
    a call already parsed makes it parse again at the end.
    """

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._calls: dict[int, _Fragments] = {}
        self._built: dict[int, ToolCall] = {}  # calls parsed early, by index
        self._last: int | None = None  # the index of the call fragments came for last

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(
        self, index: int, id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> ModelEvent:
        """Record a fragment and return the event announcing it."""
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Fragments(id, name)
        else:
            call.id = call.id or id
            call.name = call.name or name
            self._built.pop(index, None)  # more of a call parsed early: parse it again
        if arguments:
            call.arguments.append(arguments)
        if self._last is not None and self._last != index and self._last not in self._built:
            built = self._parse(self._last)
            if isinstance(built, ToolCall):
                self._built[self._last] = built
        self._last = index
        return ModelEvent.tool_call_delta(index, id=id, name=name, arguments=arguments)

    def names(self) -> list[str]:
        """The names of the calls seen so far, in index order."""
        return [self._calls[i].name or "" for i in sorted(self._calls)]

    def build(self) -> tuple[ToolCall, ...]:
        """Return the finished calls.

        Raises:
            ProviderResponseError: a call's arguments are not a JSON object.
        """
        calls = []
        for index in sorted(self._calls):
            built: ToolCall | ProviderResponseError | None = self._built.get(index)
            if built is None:
                built = self._parse(index)
            if isinstance(built, ProviderResponseError):
                raise built
            calls.append(built)
        return tuple(calls)

    def _parse(self, index: int) -> ToolCall | ProviderResponseError:
        """The call at ``index``, or the error its arguments deserve."""
        call = self._calls[index]
        # A surrogate pair split across two fragments is one character again (engine.text).
        text = clean("".join(call.arguments)).strip()
        try:
            # strict=False: llama.cpp's JSON grammar lets a model put raw control
            # characters (a newline, a tab) inside a string (compat/llamacpp-auto-tool-*).
            arguments = json.loads(text, strict=False) if text else {}
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):
            return ToolCall(call.id or f"call_{index}", call.name or "", arguments)
        who = f"{self._provider[:1].upper()}{self._provider[1:]}"
        if arguments is None and text.startswith("{") and not text.endswith("}"):
            # A forced call cut by max_tokens still says "tool_calls" (llama.cpp:
            # compat/llamacpp-forced-tool-cut.sse), so the cut shows only here.
            return ProviderResponseError(
                key="provider.tool_arguments_cut",
                params={"who": who, "name": repr(call.name)},
                provider=self._provider,
                action=ErrorAction.CHECK_MODEL,
            )
        return ProviderResponseError(
            key="provider.bad_tool_arguments",
            params={"who": who, "name": repr(call.name)},
            provider=self._provider,
        )

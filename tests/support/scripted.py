"""Scripted models and tools for tests: real implementations of the model protocol.

`ScriptedModel` plays a list of `Turn`s, one per model call, and records each request. A turn
can stream its text in chunks, fail after some of them (an exception, as a dropped connection
would), or wait on an `asyncio.Event` between chunks so a test can act mid-stream without
sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import (
    AssistantMessage,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    StopInfo,
    ToolCall,
    Usage,
)


@dataclass
class Turn:
    """One model call's behaviour."""

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    stop: StopInfo | str | None = None
    chunks: int = 1  #: split the text into this many deltas
    reasoning: str = ""
    fail_after: int | None = None  #: raise ``error`` after this many deltas
    error: BaseException | None = None
    gate: asyncio.Event | None = None  #: wait on this after the first delta
    started: asyncio.Event | None = None  #: set when the turn begins streaming
    usage: Usage | None = None
    no_completion: bool = False  #: end the stream without a completed event


@dataclass
class ScriptedModel:
    """Plays ``turns`` in order; the last turn repeats when they run out."""

    turns: list[Turn] = field(default_factory=list)
    name: str = "scripted"
    requests: list[ModelRequest] = field(default_factory=list)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        index = min(len(self.requests) - 1, len(self.turns) - 1)
        turn = self.turns[index]
        if turn.started is not None:
            turn.started.set()
        if turn.fail_after == 0 and turn.error is not None:
            raise turn.error
        if turn.reasoning:
            yield ModelEvent.reasoning(turn.reasoning)
        pieces = _split(turn.text, turn.chunks)
        for n, piece in enumerate(pieces, start=1):
            yield ModelEvent.text(piece)
            if n == 1 and turn.gate is not None:
                await turn.gate.wait()
            if turn.fail_after is not None and n >= turn.fail_after and turn.error is not None:
                raise turn.error
        for i, call in enumerate(turn.tool_calls):
            yield ModelEvent.tool_call_delta(i, id=call.id, name=call.name, arguments="{")
        if turn.error is not None and turn.fail_after is not None:
            raise turn.error
        if turn.no_completion:
            return
        message = AssistantMessage(
            content=turn.text, reasoning=turn.reasoning, tool_calls=tuple(turn.tool_calls)
        )
        yield ModelEvent.completed(ModelResponse(message=message, stop=turn.stop, usage=turn.usage))


def _split(text: str, chunks: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, chunks)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def last_user_text(request: ModelRequest) -> Any:
    return request.messages[-1]

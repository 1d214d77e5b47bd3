"""Running one answer's tool calls: approvals, start records, results stored as they finish.

For each call, in order (at most `MAX_TOOL_CALLS_PER_ANSWER`; the rest are answered "too
many" in one write before the first runs)::

    TOOL_STARTED ─► before_tool hooks ─┬─ declined ─────────────────────────┐
                                       └─ let through ─► start recorded ─► run ─┴─► result stored
        ─► TOOL_FINISHED, MESSAGE_APPENDED ─► after_tool

A call is only "running" once its hooks let it through: a Stop while ``before_tool`` waits
for a person answers it as not run. It is durably "started" before it runs: a kill before
the record leaves none, and Resume tells the model the call did not run; if the record cannot
be written (lease lost, disk full), the call does not run. A Stop during the batch answers
every call without a result (`RequestWriter.close_cut_calls`).

`settle_calls` makes a completed step's calls safe before they are stored or asked about.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from ._hooks import Hooks
from ._writes import RequestWriter
from .calls import MAX_TOOL_CALLS_PER_ANSWER, TOO_MANY_TOOL_TEXT, path_call_ids, unique_calls
from .events import AgentEvent
from .extensions import RunContext
from .messages import AssistantMessage, ToolCall, ToolMessage, ToolOutcome
from .text import clean
from .tools import Tool, ToolArgumentError, result_text

__all__ = ["ToolRunner"]

#: Items of a long loop (thousands of calls in one answer) between turns given to the loop.
_BREATHE = 500


class ToolRunner:
    """Runs the tool calls of one request.

    Args:
        tools: the agent's tools by name, read at each call (tools added while a request
            runs are offered from its next model call on).
        hooks: the extensions' hooks.
        writer: the request's writes.
    """

    def __init__(self, tools: Mapping[str, Tool], hooks: Hooks, writer: RequestWriter) -> None:
        self.tools = tools
        self.hooks = hooks
        self.writer = writer

    @property
    def ctx(self) -> RunContext:
        return self.writer.ctx

    async def settle_calls(self, message: AssistantMessage) -> AssistantMessage:
        """Make a step's tool calls safe to store and to ask about, before either happens.

        Each call gets an id no other call of the conversation has: not one of this answer
        (a provider or a proxy may send one id twice), not one on the path (a server that
        numbers calls ``call_0``, ``call_1``… in every answer), not one with a start record
        (a call of another version that ran). Repeats are renamed deterministically
        (``dup``, ``dup_2``…), within what every provider takes back (`unique_calls`); no
        protocol needs the provider's own id again, since each request carries the whole
        history and the provider matches results to calls only within it. Each call is also
        labelled with its tool's `ToolInfo` (the server and what it says of the tool), so a
        host shows the same card after a restart and an export names the tool as the card did.
        """
        taken = path_call_ids(self.ctx.messages)
        while True:
            calls = unique_calls(message.tool_calls, taken)
            clash = await self._started_ids(calls)
            if not clash:
                break
            taken |= clash  # those ids are taken by calls of other versions: rename again
        labelled: list[ToolCall] = []
        for number, call in enumerate(calls, 1):
            labelled.append(self._labelled(call))
            if number % _BREATHE == 0:
                await asyncio.sleep(0)  # thousands: the host's loop takes a turn
        return replace(message, tool_calls=tuple(labelled))

    def _labelled(self, call: ToolCall) -> ToolCall:
        tool = self.tools.get(call.name)
        info = tool.info if tool is not None else None
        return call if info is None or info == call.info else replace(call, info=info)

    async def _started_ids(self, calls: Sequence[ToolCall]) -> AbstractSet[str]:
        """The ids among ``calls`` that already have a start record (of another call)."""
        if not calls:
            return frozenset()
        asker = AssistantMessage(tool_calls=tuple(calls))
        started = await self.writer.store.started_tool_calls(self.ctx, asker)
        return started or frozenset()

    async def run(self, calls: Sequence[ToolCall]) -> AsyncGenerator[AgentEvent, None]:
        """Run ``calls`` in order, yielding their events (see the module)."""
        ctx, writer = self.ctx, self.writer
        sid, rid = ctx.session_id, ctx.request_id
        running: str | None = None
        try:
            if len(calls) > MAX_TOOL_CALLS_PER_ANSWER:
                # The calls past the cap never run: answered together, in one write, before
                # the first call runs (a kill then leaves only the calls that may run open).
                skipped: list[ToolMessage] = []
                for number, call in enumerate(calls[MAX_TOOL_CALLS_PER_ANSWER:], 1):
                    skipped.append(_failed(call, TOO_MANY_TOOL_TEXT, ToolOutcome.TOO_MANY))
                    if number % _BREATHE == 0:
                        await asyncio.sleep(0)  # thousands: the host's loop takes a turn
                await writer.append_many(skipped)
                for answer in skipped:
                    yield AgentEvent.message_appended(sid, rid, answer)
            for call in calls[:MAX_TOOL_CALLS_PER_ANSWER]:
                yield AgentEvent.tool_started(sid, rid, call)
                # Only a call its hooks let through is "running": a Stop while before_tool
                # waits for a person answers the call as not run.
                declined = await self.hooks.before_tool(ctx, call)
                if declined is None:
                    # Durably "started" before it runs: a kill before this line leaves no
                    # record, and resume tells the model the call did not run. If it cannot
                    # be recorded (lease lost, disk full), the call does not run.
                    await writer.record_tool_start(call)
                    running = call.id
                    result = await self._invoke(call)
                    running = None
                else:
                    result = _failed(call, _declined_text(declined), ToolOutcome.DECLINED)
                await writer.append(result)
                yield AgentEvent.tool_finished(sid, rid, call, result)
                yield AgentEvent.message_appended(sid, rid, result)
                await self.hooks.after_tool(ctx, call, result)
        except (asyncio.CancelledError, GeneratorExit):
            # Stop during the batch: answer every call that has no result, so the history is
            # whole ("cancelled mid-tool, already answered as cancelled" → CALL_MODEL).
            await writer.close_cut_calls(calls, running)
            raise

    async def _invoke(self, call: ToolCall) -> ToolMessage:
        """Run the tool ``call`` names; any failure is the call's failed result."""
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return _failed(call, f"There is no tool named {call.name!r}. Available tools: {known}.")
        try:
            value = await tool.invoke(call.arguments)
        except ToolArgumentError as exc:
            return _failed(
                call,
                f"Invalid arguments for {call.name}: {exc}. Call it again with corrected "
                "arguments.",
            )
        except Exception as exc:
            return _failed(call, f"The tool failed: {type(exc).__name__}: {exc}")
        return ToolMessage(
            tool_call_id=call.id, name=call.name, content=result_text(value), success=True
        )


def _failed(call: ToolCall, text: str, outcome: ToolOutcome = ToolOutcome.FAILED) -> ToolMessage:
    """A failed result for ``call`` that the model reads as ``text``."""
    return ToolMessage(
        tool_call_id=call.id, name=call.name, content=text, success=False, outcome=outcome
    )


def _declined_text(reason: str) -> str:
    """What the model reads for a call a ``before_tool`` hook declined."""
    reason = clean(reason).strip()
    return f"The person declined: {reason}" if reason else "The person declined to run this tool."

"""Reading where a conversation stopped, and what resuming adds.

Nothing records that a request did not finish: a killed process writes nothing. The history is
the record, and its last message says how it stopped (DESIGN.md, "What resuming does"). What a
killed process had streamed survives as its draft (`engine.drafts`): the next lease stores it
as an answer stopped ``interrupted`` (raw ``app_stopped``), and until then `Agent.resume_point`
reads it as the history's last message, so either way the row is "a response stopped
interrupted":

====================================  =====================  ==================================
history ends in                        kind                   resume adds
====================================  =====================  ==================================
a user or internal message             CALL_MODEL             nothing
tool results, all present              CALL_MODEL             nothing
a step stopped ``paused``              CALL_MODEL             nothing
tool calls without results             RECOVER_TOOLS          a failed result per missing call:
                                                              "did not run" for a call that
                                                              never started, else "may or may
                                                              not have completed"
a response stopped ``interrupted``     RETRY_RESPONSE         an internal "redo it" notice
a response stopped ``max_output``      CONTINUE_RESPONSE      an internal "continue" notice
a normal answer / refusal / full /     (AgentResumeError: completed / refused / context_full /
other stop / nothing / orphan result    unknown_stop / empty / malformed)
====================================  =====================  ==================================

Only the tail is read: `find_resume_point` pages backwards through stored records until it
has seen the assistant message that a trailing run of tool results answers, so its cost does
not grow with the history.

A store that records tool starts (the SQLite store writes one just before a call runs, after
its approval) tells which unanswered calls never started: those are answered ``not_run``
("did not run"); the others, and every call when the store cannot tell (no such records, or
a call older than them), stay "may or may not have completed". No tool is ever run again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import StrEnum

from .errors import AgentResumeError
from .extensions import StoredMessage
from .messages import (
    AssistantMessage,
    InternalMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolOutcome,
    UserMessage,
)
from .sentences import sentence
from .stop import StopInfo, StopReason

__all__ = [
    "INTERRUPTED_TOOL_TEXT",
    "NOT_STARTED_TOOL_TEXT",
    "ResumeKind",
    "ResumePoint",
    "find_resume_point",
    "interrupted_tool_result",
    "resume_notice",
]

# The texts below are read by the model, not by a person: they keep the seed's exact English
# words whatever language the host speaks (sentences for people are in engine.sentences).

#: What the model reads for a call whose result is missing (the seed's exact words).
INTERRUPTED_TOOL_TEXT = (
    "The process stopped while this tool was running, so it may or may not have completed, "
    "and whatever it changes may or may not have happened. Check the current state before "
    "running it again."
)
CANCELLED_TOOL_TEXT = (
    "The user stopped the request while this tool was running, so it may or may not have "
    "completed. Check the current state before running it again."
)
NOT_RUN_TOOL_TEXT = "The user stopped the request before this tool ran, so it did not run."
#: What the model reads on resume for a call that never started (its start was not recorded).
NOT_STARTED_TOOL_TEXT = "The tool did not run: the app stopped before it started."

RETRY_NOTICE = (
    "Your previous response was cut off before it was complete, so the user did not receive "
    "all of it. Redo that response from the start."
)
CONTINUE_NOTICE = (
    "Your previous response reached the output limit. Continue exactly where it stopped, "
    "without repeating anything already written."
)


class ResumeKind(StrEnum):
    CALL_MODEL = "call_model"
    RECOVER_TOOLS = "recover_tools"
    RETRY_RESPONSE = "retry_response"
    CONTINUE_RESPONSE = "continue_response"


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a conversation stopped and what resuming will do.

    Attributes:
        kind: which row of the resume table applies.
        description: one plain sentence for a person (the Resume button's tooltip), in the
            language the host asked for (``AgentRunConfig.language``).
        unanswered_tool_calls: for RECOVER_TOOLS, the calls whose results are missing.
        not_started: for RECOVER_TOOLS, those of ``unanswered_tool_calls`` known never to
            have started (resuming answers them "did not run"); the others may have run.
        stop: the stop of the last assistant message, when that is what decided the kind.
    """

    kind: ResumeKind
    description: str
    unanswered_tool_calls: tuple[ToolCall, ...] = ()
    stop: StopInfo | None = None
    not_started: tuple[ToolCall, ...] = ()

    def recovery_results(self) -> list[ToolMessage]:
        """The failed results resuming adds for RECOVER_TOOLS, one per unanswered call."""
        never = {call.id for call in self.not_started}
        return [
            interrupted_tool_result(call, NOT_STARTED_TOOL_TEXT, ToolOutcome.NOT_RUN)
            if call.id in never
            else interrupted_tool_result(call)
            for call in self.unanswered_tool_calls
        ]


def interrupted_tool_result(
    call: ToolCall,
    text: str = INTERRUPTED_TOOL_TEXT,
    outcome: ToolOutcome = ToolOutcome.INTERRUPTED,
) -> ToolMessage:
    """A failed result answering ``call`` that did not finish (``outcome``: interrupted while
    running, or not run at all)."""
    return ToolMessage(
        tool_call_id=call.id, name=call.name, content=text, success=False, outcome=outcome
    )


def resume_notice(kind: ResumeKind) -> InternalMessage | None:
    """The internal message a resume of this kind adds, if any."""
    if kind is ResumeKind.RETRY_RESPONSE:
        return InternalMessage(content=RETRY_NOTICE, tag=f"resume:{kind.value}")
    if kind is ResumeKind.CONTINUE_RESPONSE:
        return InternalMessage(content=CONTINUE_NOTICE, tag=f"resume:{kind.value}")
    return None


TailReader = Callable[[int, int | None], Awaitable[Sequence[StoredMessage]]]
#: ``read_starts(asker)``: the ids of ``asker``'s tool calls that started, or None when the
#: store cannot tell.
StartReader = Callable[[AssistantMessage], Awaitable[AbstractSet[str] | None]]
#: Page sizes, growing: the last message alone decides most cases; a run of tool results
#: needs a few more; only a huge batch of calls reads further.
_FIRST_PAGE, _MAX_PAGE = 2, 256


async def find_resume_point(
    read_tail: TailReader, language: str = "en", read_starts: StartReader | None = None
) -> ResumePoint:
    """Decide the resume point from the tail of a history.

    Args:
        read_tail: ``read_tail(limit, before_seq)`` returns up to ``limit`` stored records
            before ``before_seq`` (None: the end), oldest first.
        language: the language of the point's description (`engine.sentences`).
        read_starts: which tool calls started (`StartReader`); without it, every unanswered
            call may have run.

    Raises:
        AgentResumeError: with the reason when there is nothing to resume.
    """
    tail: list[Message] = []  # newest last, system messages dropped
    before: int | None = None
    exhausted = False
    size = _FIRST_PAGE

    async def more() -> bool:
        nonlocal before, exhausted, size
        if exhausted:
            return False
        page = await read_tail(size, before)
        if len(page) < size:
            exhausted = True
        size = min(size * 4, _MAX_PAGE)
        if not page:
            return False
        before = page[0].seq
        tail[:0] = [r.message for r in page if not isinstance(r.message, SystemMessage)]
        return True

    while not tail:
        if not await more():
            raise AgentResumeError("empty")
    last = tail[-1]
    if isinstance(last, UserMessage | InternalMessage):
        return ResumePoint(ResumeKind.CALL_MODEL, sentence("resume.call_model", language))
    if isinstance(last, AssistantMessage):
        return await _from_assistant(last, language, read_starts)
    if not isinstance(last, ToolMessage):
        raise AgentResumeError("malformed")
    # A run of tool results: find the assistant message that asked for them.
    index = len(tail) - 1
    while True:
        while index >= 0 and isinstance(tail[index], ToolMessage):
            index -= 1
        if index >= 0:
            break
        if not await more():
            raise AgentResumeError("malformed")
        index = len(tail) - 1  # re-scan, now with the older records prepended
    asker = tail[index]
    results = [m for m in tail[index + 1 :] if isinstance(m, ToolMessage)]
    if not isinstance(asker, AssistantMessage) or not asker.tool_calls:
        raise AgentResumeError("malformed")
    call_ids = {call.id for call in asker.tool_calls}
    if any(result.tool_call_id not in call_ids for result in results):
        raise AgentResumeError("malformed")
    answered = {result.tool_call_id for result in results}
    missing = tuple(call for call in asker.tool_calls if call.id not in answered)
    if not missing:
        return ResumePoint(ResumeKind.CALL_MODEL, sentence("resume.tool_results", language))
    return await _recover(asker, missing, language, read_starts)


async def _recover(
    asker: AssistantMessage,
    missing: tuple[ToolCall, ...],
    language: str,
    read_starts: StartReader | None,
) -> ResumePoint:
    started = None if read_starts is None else await read_starts(asker)
    ran: tuple[ToolCall, ...]
    never: tuple[ToolCall, ...]
    if started is None:  # unknown: every call may have run
        ran, never = missing, ()
    else:
        ran = tuple(call for call in missing if call.id in started)
        never = tuple(call for call in missing if call.id not in started)
    if ran and never:
        description = sentence(
            "resume.recover_mixed", language, ran=_names(ran), not_run=_names(never)
        )
    elif never:
        key = "resume.not_run_tool" if len(never) == 1 else "resume.not_run_tools"
        description = sentence(key, language, names=_names(never))
    else:
        key = "resume.recover_tool" if len(ran) == 1 else "resume.recover_tools"
        description = sentence(key, language, names=_names(ran))
    return ResumePoint(
        ResumeKind.RECOVER_TOOLS,
        description,
        unanswered_tool_calls=missing,
        not_started=never,
    )


def _names(calls: tuple[ToolCall, ...]) -> str:
    return ", ".join(dict.fromkeys(call.name for call in calls))


#: the retry description for each raw code of an interrupted response
_RETRY_KEYS = {
    "cancelled": "resume.retry.cancelled",
    "network_error": "resume.retry.network_error",
    "app_stopped": "resume.retry.app_stopped",
}


async def _from_assistant(
    message: AssistantMessage, language: str, read_starts: StartReader | None
) -> ResumePoint:
    stop = message.stop
    if stop is None or stop.ok:
        if message.tool_calls:
            return await _recover(message, tuple(message.tool_calls), language, read_starts)
        raise AgentResumeError("completed")
    reason = stop.reason
    if reason is StopReason.INTERRUPTED:
        key = _RETRY_KEYS.get(stop.raw or "", "resume.retry.error")
        return ResumePoint(ResumeKind.RETRY_RESPONSE, sentence(key, language), stop=stop)
    if reason is StopReason.MAX_OUTPUT:
        return ResumePoint(
            ResumeKind.CONTINUE_RESPONSE, sentence("resume.continue", language), stop=stop
        )
    if reason is StopReason.PAUSED:
        return ResumePoint(ResumeKind.CALL_MODEL, sentence("resume.paused", language), stop=stop)
    if reason is StopReason.REFUSAL:
        raise AgentResumeError("refused")
    if reason is StopReason.CONTEXT_FULL:
        raise AgentResumeError("context_full")
    raise AgentResumeError("unknown_stop")

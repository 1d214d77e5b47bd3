"""The last event of a step: the answer assembled, and a server's stop values fit to store.

Every adapter ends a step with `completed`, whatever its wire said, so one rule holds for
all of them (DESIGN.md, resume rules):

- a normal stop becomes ``tool_use`` when calls arrived and ``end_turn`` when none did;
- an abnormal stop (output limit, refusal, full context, pause, anything unknown) carries no
  tool calls: they may be cut short, so they are withheld and named in
  ``stop.details["withheld_tool_calls"]``, and the stop gets the sentence a person reads;
- the server's own values (its stop reason, a stop sequence) are stored at most
  `STOP_VALUE_LIMIT` characters long with every credential hidden: a server's 100 KB
  finish_reason holding the key was once stored whole.

A context-length error response is a stop too, not an error (`context_full`): it is stored,
and Resume says to start a new conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..messages import AssistantMessage, Usage
from ..model import ModelEvent, ModelResponse
from ..sentences import sentence
from ..stop import StopInfo, StopReason
from ._errors import ErrorWording
from ._tool_calls import ToolCallAccumulator

__all__ = ["STOP_VALUE_LIMIT", "completed", "context_full"]

#: characters of a server's stop reason or stop sequence stored and quoted
STOP_VALUE_LIMIT = 64

#: the stop details that hold a server's own values (scrubbed like its stop reason)
_SERVER_STOP_DETAILS = frozenset({"stop_sequence", "finish_reason"})

#: the sentence a person reads for each abnormal stop (StopInfo.message, in English; a host
#: shows it in another language with engine.sentences.describe_stop)
_STOP_MESSAGES: dict[StopReason, str] = {
    reason: sentence(f"stop.{reason.value}")
    for reason in (
        StopReason.MAX_OUTPUT,
        StopReason.REFUSAL,
        StopReason.CONTEXT_FULL,
        StopReason.PAUSED,
    )
}


def completed(
    words: ErrorWording,
    model: str,
    *,
    text: str,
    reasoning: str,
    tools: ToolCallAccumulator,
    stop: StopInfo,
    usage: Usage | None,
    provider_data: Mapping[str, Any] | None = None,
) -> ModelEvent:
    """Assemble the step's `AssistantMessage` and wrap it in the last event.

    Args:
        words: the adapter's wording (hides credentials in the stop values).
        model: the model id, stored as ``AssistantMessage.model``.
        text, reasoning, tools, usage, provider_data: what the stream brought.
        stop: the stop as the wire said it; normalised as the module says.

    Raises:
        ProviderResponseError: a normal stop whose tool calls have unusable arguments.
    """
    stop = _stop_quoted(words, stop)
    if stop.ok:
        calls = tools.build()
        reason = StopReason.TOOL_USE if calls else StopReason.END_TURN
        if reason is not stop.reason:
            stop = replace(stop, reason=reason)
        message_stop = None
    else:
        calls = ()
        details = dict(stop.details)
        if tools:
            details["withheld_tool_calls"] = tools.names()
        stop = replace(
            stop,
            message=stop.message
            or _STOP_MESSAGES.get(stop.reason)
            or sentence("stop.unknown", raw=stop.raw),
            details=details,
        )
        message_stop = stop
    message = AssistantMessage(
        content=text,
        reasoning=reasoning,
        tool_calls=calls,
        stop=message_stop,
        usage=usage,
        model=model,
        provider_data=provider_data or {},
    )
    return ModelEvent.completed(ModelResponse(message, stop=stop, usage=usage))


def context_full(words: ErrorWording, model: str, raw: str, detail: str) -> ModelEvent:
    """The completed step for a recognised context-length error response (stored).

    ``raw`` is the stop's raw value (the wire's code for it); ``detail`` the server's words,
    quoted in the stop's sentence.
    """
    stop = StopInfo(
        StopReason.CONTEXT_FULL,
        raw=raw,
        message=sentence(
            "stop.context_full_model", model=model, detail=words.scrub(detail).rstrip(".")
        ),
    )
    return completed(
        words,
        model,
        text="",
        reasoning="",
        tools=ToolCallAccumulator(words.provider),
        stop=stop,
        usage=None,
    )


def _stop_quoted(words: ErrorWording, stop: StopInfo) -> StopInfo:
    """The stop with the server's own values (its reason, a stop sequence) fit to store.

    An unknown reason is stored as ``raw`` and quoted in the stop message.
    """
    raw = stop.raw if stop.raw is None else _stop_value(words, stop.raw)
    quoted = {
        key: _stop_value(words, value)
        if key in _SERVER_STOP_DETAILS and value is not None
        else value
        for key, value in stop.details.items()
    }
    if raw == stop.raw and quoted == dict(stop.details):
        return stop
    return replace(stop, raw=raw, details=quoted)


def _stop_value(words: ErrorWording, value: object) -> str:
    """One server stop value: unchanged when short and clean (a stop sequence may be
    whitespace), else scrubbed and cut to `STOP_VALUE_LIMIT`."""
    text = str(value)
    if len(text) <= STOP_VALUE_LIMIT and words.redact(text) == text:
        return text
    return words.scrub(text, STOP_VALUE_LIMIT)

"""One model step: its deltas forwarded as events, its draft, and the message it is stored as.

A `Step` runs one model call. It yields the text, reasoning and tool-call deltas as events,
joined so that a surrogate pair split across two events is one character again
(`engine.text`); while it streams, its `DraftWriter` keeps what it has shown as the
session's draft. It ends in one of three ways:

* completed: `Step.stored` is the message to store, with the storage rules applied
  (`normalise`) and its tool calls made safe (the ``settle`` callback);
* completed but stopped ``interrupted`` by the provider: stored the same, then
  `StepInterrupted` is raised;
* a fault or a cancel: `Step.partial` is what arrived, as the message to store (stop
  ``interrupted``, raw ``cancelled``, ``network_error`` or ``provider_error``:
  `fault_stop`), or None when nothing did.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from ._finish import finish
from .drafts import DraftWriter, app_stopped_stop
from .errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from .events import AgentEvent
from .extensions import RunContext
from .messages import AssistantMessage, new_id
from .model import ModelEventKind, ModelRequest, ModelResponse
from .sentences import sentence
from .stop import StopInfo, StopReason
from .text import TextJoiner, clean

__all__ = ["Step", "StepInterrupted", "fault_stop", "model_name", "normalise", "response_of"]


class StepInterrupted(Exception):
    """A completed step carried stop ``interrupted``: stored, then raised as a provider error."""


class Step:
    """One model call: forwards deltas as events and remembers them for a partial response.

    Args:
        model: the model to call.
        settle: makes the completed step's tool calls safe (unique ids, labels).
        save_draft: stores the step's draft (the store's ``save_draft`` for the request).
        draft_interval: seconds between draft saves.
    """

    def __init__(
        self,
        model: Any,
        settle: Callable[[AssistantMessage], Awaitable[AssistantMessage]],
        save_draft: Callable[[AssistantMessage], Awaitable[object]],
        draft_interval: float,
    ) -> None:
        self.model = model
        self._settle = settle
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self._text = TextJoiner()
        self._reasoning = TextJoiner()
        self._arguments: dict[int, TextJoiner] = {}
        self.call_names: dict[int, str] = {}
        self.got_output = False
        self._stored: AssistantMessage | None = None
        self._draft_id = new_id()
        self._started = time.time()
        #: keeps the step's draft while it streams
        self.drafts = DraftWriter(save_draft, self.draft, draft_interval)

    async def run(self, request: ModelRequest, ctx: RunContext) -> AsyncGenerator[AgentEvent, None]:
        """Call the model, yielding its deltas as events; `stored` is set when it completes.

        Raises:
            StepInterrupted: the completed step's stop is ``interrupted`` (`stored` is set).
            ProviderResponseError: the stream ended without a completed response.
        """
        sid, rid = ctx.session_id, ctx.request_id
        stream = self.model.stream(request)
        response: ModelResponse | None = None
        drafts = self.drafts
        try:
            async for event in stream:
                kind = event.kind
                if kind is ModelEventKind.TEXT:
                    if event.delta:
                        self.got_output = True
                        piece = self._text.feed(event.delta)
                        if piece:
                            self.text.append(piece)
                            drafts.changed()
                            yield AgentEvent.text_delta(sid, rid, piece)
                elif kind is ModelEventKind.REASONING:
                    if event.delta:
                        self.got_output = True
                        piece = self._reasoning.feed(event.delta)
                        if piece:
                            self.reasoning.append(piece)
                            drafts.changed()
                            yield AgentEvent.reasoning_delta(sid, rid, piece)
                elif kind is ModelEventKind.TOOL_CALL_DELTA and event.tool_call is not None:
                    self.got_output = True
                    delta = event.tool_call
                    if delta.name:
                        self.call_names[delta.index] = clean(delta.name)
                        drafts.changed()  # the draft names the call it withholds
                    joiner = self._arguments.setdefault(delta.index, TextJoiner())
                    arguments = joiner.feed(delta.arguments)
                    name = clean(delta.name) if delta.name else delta.name
                    if arguments != delta.arguments or name != delta.name:
                        delta = replace(delta, name=name, arguments=arguments)
                    yield AgentEvent.tool_call_delta(sid, rid, delta)
                elif kind is ModelEventKind.RETRYING and event.retry is not None:
                    # News, not output: no partial, no draft (got_output stays as it was).
                    yield AgentEvent.model_retrying(sid, rid, event.retry)
                elif kind is ModelEventKind.COMPLETED:
                    response = event.response
                    # A high surrogate still held never got its low half: it shows as U+FFFD.
                    if piece := self._text.flush():
                        self.text.append(piece)
                        yield AgentEvent.text_delta(sid, rid, piece)
                    if piece := self._reasoning.flush():
                        self.reasoning.append(piece)
                        yield AgentEvent.reasoning_delta(sid, rid, piece)
                    break
        finally:
            # The draft stops before the step's message is stored, so no draft write can
            # land after the append that replaces it.
            await finish(drafts.close())
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await finish(aclose())
        if response is None:
            raise ProviderResponseError(
                key="agent.no_final_response",
                provider=getattr(self.model, "provider_name", "the provider"),
            )
        stored = normalise(response, self.model)
        if stored.tool_calls:
            stored = await self._settle(stored)
        self._stored = stored
        if stored.stop is not None and stored.stop.reason is StopReason.INTERRUPTED:
            stop = stored.stop
            raise StepInterrupted(stop.message or sentence("stop.provider_error"))

    @property
    def stored(self) -> AssistantMessage:
        """The step's message as stored (set once the model completed the step)."""
        assert self._stored is not None, "the step has not completed"
        return self._stored

    def draft(self) -> AssistantMessage | None:
        """What the step has shown so far, as the message it becomes if the process dies."""
        if not self.text and not self.reasoning:
            return None  # only tool-call fragments: nothing a person could read
        names = [self.call_names[i] for i in sorted(self.call_names)]
        return AssistantMessage(
            id=self._draft_id,
            created_at=self._started,
            content="".join(self.text),
            reasoning="".join(self.reasoning),
            stop=app_stopped_stop(names),
            model=model_name(self.model),
        )

    def partial(self, exc: BaseException) -> AssistantMessage | None:
        """The partial response for a fault, or None when nothing arrived."""
        if not self.got_output:
            return None
        names = [self.call_names[i] for i in sorted(self.call_names)]
        return AssistantMessage(
            content="".join(self.text) + self._text.flush(),
            reasoning="".join(self.reasoning) + self._reasoning.flush(),
            stop=fault_stop(exc, names),
            model=model_name(self.model),
        )


def response_of(message: AssistantMessage) -> ModelResponse:
    """The `ModelResponse` that ``after_model`` and MODEL_COMPLETED carry for a stored step."""
    return ModelResponse(message=message, stop=message.stop, usage=message.usage)


def fault_stop(exc: BaseException, withheld: Sequence[str]) -> StopInfo:
    """The stop of an answer a fault (or a cancel) cut off; names the calls it withheld."""
    details = {"withheld_tool_calls": list(withheld)} if withheld else {}
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        raw, text = "cancelled", sentence("stop.cancelled")
    elif _is_network_fault(exc):
        raw, text = "network_error", sentence("stop.network_error")
    else:
        raw = "provider_error"
        text = (
            str(exc)
            if isinstance(exc, ProviderError)
            else sentence("stop.error", name=type(exc).__name__)
        )
    return StopInfo(StopReason.INTERRUPTED, raw=raw, message=text, details=details)


def _is_network_fault(exc: BaseException) -> bool:
    """A connection or timeout fault: the adapters raise `ProviderConnectionError` and
    `ProviderTimeoutError`; a third-party model may let an `OSError` or httpx's own
    `TransportError` through. httpx is looked for only if it was imported: an error of a
    module nobody loaded cannot exist, and ``import engine`` does not load httpx."""
    if isinstance(exc, ProviderConnectionError | ProviderTimeoutError | OSError):
        return True
    httpx = sys.modules.get("httpx")
    return httpx is not None and isinstance(exc, httpx.TransportError)


def normalise(response: ModelResponse, model: Any) -> AssistantMessage:
    """Apply the storage rules: ``stop`` only when abnormal; no tool calls with it."""
    message = response.message
    stop = response.stop or message.stop
    usage = response.usage or message.usage
    if stop is None or stop.ok:
        message = replace(message, stop=None, usage=usage)
    else:
        if message.tool_calls:
            names = [call.name for call in message.tool_calls]
            details = dict(stop.details)
            details.setdefault("withheld_tool_calls", names)
            stop = replace(stop, details=details)
        message = replace(message, tool_calls=(), stop=stop, usage=usage)
    if message.model is None:
        message = replace(message, model=model_name(model))
    return message


def model_name(model: Any) -> str | None:
    """The model's ``name`` when it has one (stored with each answer)."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else None

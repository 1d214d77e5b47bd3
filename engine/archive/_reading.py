"""What the reading exports (Markdown, HTML) say, in the window's words.

An export to read shows a conversation as the window does, not as it is stored:

* the model line names the provider by the name the person gave it, never by its internal id
  (`model_line`; the host passes the names it knows);
* a tool result's outcome is said in words ("did not run"), never as a raw state id
  (`outcome_words`);
* a message Continuo wrote for the model (the notice Resume adds, a goal's nudge) is the short
  caption the window shows between the answers, not the instruction itself (`notice_caption`);
* an answer that was cut off or stopped and then redone by Resume is shown as the window
  shows it: marked as the earlier attempt, before the answer that replaced it (`Attempts`).

The JSON export is not concerned: it keeps every message as stored, to be lossless.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..messages import AssistantMessage, InternalMessage, Message, ToolMessage, ToolOutcome
from ..resume import ResumeKind
from ..stop import StopReason

__all__ = ["Attempts", "Group", "model_line", "notice_caption", "outcome_words"]

#: the tag of the notice Resume adds when it redoes a cut-off answer
RETRY_TAG = f"resume:{ResumeKind.RETRY_RESPONSE.value}"

_CAPTIONS = {
    RETRY_TAG: "Resumed: the cut-off answer is redone",
    f"resume:{ResumeKind.CONTINUE_RESPONSE.value}": "Resumed: continuing after the output limit",
    "goal": "Goal not reached yet: carrying on",
}

# A tool card's words for each way a call ended (ui/conversation/tool_card.py).
_OUTCOMES = {
    ToolOutcome.OK: "done",
    ToolOutcome.FAILED: "failed",
    ToolOutcome.DECLINED: "denied",
    ToolOutcome.INTERRUPTED: "interrupted",
    ToolOutcome.NOT_RUN: "did not run",
    ToolOutcome.TOO_MANY: "did not run: too many calls in one answer",
}


def model_line(metadata: Mapping[str, Any], provider_names: Mapping[str, str]) -> str | None:
    """"Model: gpt-4o (Work account)" when the conversation's metadata names a model; the
    provider by its name when the host knows it, left out when it does not (its id means
    nothing to a reader)."""
    model, provider = metadata.get("model"), metadata.get("provider_id")
    if not isinstance(model, str) or not model:
        return None
    name = provider_names.get(provider) if isinstance(provider, str) else None
    return f"Model: {model}" + (f" ({name})" if name else "")


def outcome_words(result: ToolMessage) -> str:
    """How a tool call ended, as its card says it."""
    if result.outcome is None:  # not built through ToolMessage's own defaults
        return "done" if result.success else "failed"
    return _OUTCOMES.get(result.outcome, "failed")


def notice_caption(notice: InternalMessage) -> str:
    """The caption the window shows for a message Continuo wrote for the model."""
    if notice.tag in _CAPTIONS:
        return _CAPTIONS[notice.tag]
    if notice.tag and notice.tag.startswith("resume:"):
        return "Resumed"
    text = notice.content.strip()
    return text.splitlines()[0][:120] if text else ""


def _cut(message: Message) -> str | None:
    """"stopped" or "cut off" for an answer Resume may redo (as the window folds it)."""
    if not isinstance(message, AssistantMessage) or message.stop is None:
        return None
    if message.stop.ok or message.stop.reason is not StopReason.INTERRUPTED:
        return None
    return "stopped" if message.stop.cancelled else "cut off"


#: messages to write together, and how the group is marked: None (as they are), or "cut off"
#: / "stopped" for an earlier attempt Resume redid
Group = tuple[list[Message], str | None]


class Attempts:
    """Holds a cut-off or stopped answer (and the tool results after it) until the next
    message says whether Resume redid it: a retry notice next makes it the earlier attempt.

    Fed the messages of a conversation in order, a page at a time; `flush` at its end.
    """

    def __init__(self) -> None:
        self._held: list[Message] = []
        self._how: str | None = None

    def feed(self, messages: Iterable[Message]) -> list[Group]:
        out: list[Group] = []
        for message in messages:
            if self._held and isinstance(message, ToolMessage):
                self._held.append(message)  # the cut-off answer's own calls' results
                continue
            if self._held:
                redone = isinstance(message, InternalMessage) and message.tag == RETRY_TAG
                out.append((self._held, self._how if redone else None))
                self._held, self._how = [], None
            how = _cut(message)
            if how is not None:
                self._held, self._how = [message], how
            else:
                out.append(([message], None))
        return out

    def flush(self) -> list[Group]:
        held, self._held = self._held, []
        return [(held, None)] if held else []

"""Goal mode: after each final answer, an evaluator decides whether the request goes on.

A request armed with ``Goal(description, evaluator, max_rounds)`` does not end at the first
answer with no tool calls: the evaluator reads the goal and the answer and either accepts it or
returns what to tell the model next, which is appended as an `InternalMessage` tagged ``goal``.
The rounds are bounded. A resume never re-arms a goal: the goal belongs to the request that was
interrupted, and nothing about it is stored.

An evaluator is either a function ``(goal, answer, messages) -> bool | str | GoalVerdict``
(sync or async; ``True`` means done, a string means "not yet, tell the model this"), or a model
(anything with ``stream(request)``), asked to reply ``DONE`` or ``CONTINUE: <instruction>``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .messages import AssistantMessage, Message, SystemMessage, UserMessage
from .model import ModelEventKind, ModelRequest

__all__ = ["Goal", "GoalVerdict", "evaluate_goal"]

_JUDGE_PROMPT = (
    "You check whether an assistant's answer meets a goal. Reply with exactly DONE if it does. "
    "Otherwise reply CONTINUE: followed by one short instruction telling the assistant what is "
    "still missing."
)
_DEFAULT_NUDGE = "The goal is not met yet. Keep working towards it: {goal}"


@dataclass(frozen=True, slots=True)
class GoalVerdict:
    """An evaluator's decision: ``done``, or what to tell the model next."""

    done: bool
    message: str | None = None


@dataclass(frozen=True, slots=True)
class Goal:
    """What a request must achieve, who judges it, and for how many extra rounds at most."""

    description: str
    evaluator: Any
    max_rounds: int = 3

    def __post_init__(self) -> None:
        if self.max_rounds < 0:
            raise ValueError("max_rounds must be zero or more")


async def evaluate_goal(
    goal: Goal, answer: AssistantMessage, messages: Sequence[Message]
) -> GoalVerdict:
    """Ask the goal's evaluator about ``answer``."""
    evaluator = goal.evaluator
    if hasattr(evaluator, "stream") and not callable(getattr(evaluator, "__func__", None)):
        return await _ask_model(evaluator, goal, answer)
    result = evaluator(goal, answer, messages)
    if inspect.isawaitable(result):
        result = await result
    return _verdict(result, goal)


def _verdict(result: Any, goal: Goal) -> GoalVerdict:
    if isinstance(result, GoalVerdict):
        return result
    if isinstance(result, bool):
        return GoalVerdict(result, None if result else _DEFAULT_NUDGE.format(goal=goal.description))
    if isinstance(result, str):
        return GoalVerdict(False, result)
    raise TypeError(f"A goal evaluator returned {type(result).__name__}; expected bool or str")


async def _ask_model(model: Any, goal: Goal, answer: AssistantMessage) -> GoalVerdict:
    request = ModelRequest(
        messages=[
            SystemMessage(content=_JUDGE_PROMPT),
            UserMessage(content=f"Goal: {goal.description}\n\nAnswer:\n{answer.content}"),
        ]
    )
    reply = ""
    async for event in model.stream(request):
        if event.kind is ModelEventKind.COMPLETED and event.response is not None:
            reply = event.response.message.content
    text = reply.strip()
    if text.upper().startswith("DONE"):
        return GoalVerdict(True)
    instruction = text.split(":", 1)[1].strip() if ":" in text else ""
    return GoalVerdict(False, instruction or _DEFAULT_NUDGE.format(goal=goal.description))

"""The extensions' hooks, found once by name when the agent is built, then called typed.

The names are the ones `engine.extensions.HOOKS` lists. Each hook found must be a coroutine
function (DESIGN.md: "plain objects with any of these async hooks"). A callable attribute
named like a hook (``on_*``, ``before_*``, ``after_*``) that is not one is refused with
`TypeError` when the agent is built: a misspelt ``before_tool`` (an approval) would otherwise
silently never run. The no-op hooks `Extension` provides are skipped.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .extensions import HOOKS, Extension, RunContext, ToolDenial
from .messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from .model import ModelRequest, ModelResponse

__all__ = ["Hooks"]

_HOOK_LIKE = re.compile(r"(on|before|after)_")

_Hook = Callable[..., Awaitable[Any]]


class Hooks:
    """Every extension's hooks, in the extensions' order, one list per hook."""

    def __init__(self, extensions: Iterable[object]) -> None:
        found: dict[str, list[_Hook]] = {name: [] for name in HOOKS}
        for ext in extensions:
            for name in dir(ext):
                if not _HOOK_LIKE.match(name):
                    continue
                hook = getattr(ext, name, None)
                if not callable(hook):
                    continue
                if name not in HOOKS:
                    raise TypeError(
                        f"{type(ext).__name__}.{name} is not a hook the engine calls; hooks "
                        f"are {', '.join(sorted(HOOKS))} (rename or remove it)"
                    )
                if getattr(hook, "__func__", None) is getattr(Extension, name):
                    continue  # Extension's own no-op
                if not inspect.iscoroutinefunction(hook):
                    raise TypeError(
                        f"{type(ext).__name__}.{name} must be a coroutine function "
                        "(async def): the engine awaits every hook"
                    )
                found[name].append(hook)
        self._on_message = found["on_message"]
        self._before_run = found["before_run"]
        self._after_run = found["after_run"]
        self._on_error = found["on_error"]
        self._before_model = found["before_model"]
        self._after_model = found["after_model"]
        self._before_tool = found["before_tool"]
        self._after_tool = found["after_tool"]

    async def on_message(self, ctx: RunContext, message: UserMessage) -> None:
        for hook in self._on_message:
            await hook(ctx, message)

    async def before_run(self, ctx: RunContext) -> None:
        for hook in self._before_run:
            await hook(ctx)

    async def after_run(self, ctx: RunContext, result: AssistantMessage) -> None:
        for hook in self._after_run:
            await hook(ctx, result)

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        for hook in self._on_error:
            await hook(ctx, error)

    async def before_model(self, ctx: RunContext, request: ModelRequest) -> ModelRequest:
        """The request after every hook had its say (a hook may return a replacement)."""
        for hook in self._before_model:
            replaced = await hook(ctx, request)
            if replaced is not None:
                request = replaced
        return request

    async def after_model(self, ctx: RunContext, response: ModelResponse) -> None:
        for hook in self._after_model:
            await hook(ctx, response)

    async def before_tool(self, ctx: RunContext, call: ToolCall) -> str | None:
        """The reason the first hook that declined ``call`` gave, or None: it may run.

        A hook declines with a `ToolDenial` (any other value counts as its reason).
        """
        for hook in self._before_tool:
            denial = await hook(ctx, call)
            if denial is not None:
                return denial.reason if isinstance(denial, ToolDenial) else str(denial)
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, result: ToolMessage) -> None:
        for hook in self._after_tool:
            await hook(ctx, call, result)

"""A new version (edit or regenerate) in a child process, stopped at a chosen instant so the
parent can SIGKILL it there.

Usage: ``python -m tests.engine.version_kill_child DB OP WHICH WHEN`` with OP ``edit`` or
``regenerate``, WHICH ``first`` or ``later`` (the question the version replaces, or answers
again) and WHEN ``before`` or ``after``:

* ``before``: an edit blocks in its ``on_message`` hook once it sees the edited text (called
  after the branch point is chosen, before the new question is stored); a regenerate blocks
  in ``before_run`` (nothing of the new answer is stored yet).
* ``after``: an edit blocks in ``before_run`` (the edited question is stored); a regenerate
  blocks in the model once the new answer's streaming draft is stored.

The child first sends two questions (``Question one``, ``Question two``) on session ``s``.
When it blocks it prints ``blocked`` (flushed) and waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Agent, AgentRunConfig, Extension, ModelEvent, ModelResponse, UserMessage
from engine.messages import AssistantMessage
from engine.storage import SQLiteSessionExtension

EDITED = "edited question"


def _block() -> asyncio.Future[None]:
    print("blocked", flush=True)
    return asyncio.get_running_loop().create_future()  # never set: the parent kills us


class _Store(SQLiteSessionExtension):
    block_on_draft = False

    async def save_draft(self, ctx, message, **where) -> None:  # type: ignore[no-untyped-def]
        await super().save_draft(ctx, message, **where)
        if self.block_on_draft:
            await _block()


class _Hooks(Extension):
    def __init__(self, op: str, when: str) -> None:
        self.op, self.when = op, when
        self.armed = False

    async def on_message(self, ctx, message: UserMessage) -> None:  # type: ignore[no-untyped-def]
        if self.armed and self.op == "edit" and self.when == "before":
            assert message.content == EDITED
            await _block()

    async def before_run(self, ctx) -> None:  # type: ignore[no-untyped-def]
        if not self.armed:
            return
        if (self.op, self.when) in (("edit", "after"), ("regenerate", "before")):
            await _block()


class _Model:
    name = "child"

    def __init__(self) -> None:
        self.answers = iter(["Answer one", "Answer two"])

    async def stream(self, request):  # type: ignore[no-untyped-def]
        answer = next(self.answers, None)
        if answer is None:  # the new version's answer: it streams, then hangs
            yield ModelEvent.text("A new answer, streaming")
            await asyncio.get_running_loop().create_future()
        yield ModelEvent.completed(ModelResponse(AssistantMessage(content=answer)))


async def run(db: str, op: str, which: str, when: str) -> None:
    store = _Store(db)
    hooks = _Hooks(op, when)
    agent = await Agent.create(
        _Model(), config=AgentRunConfig("s", draft_interval=0.01), extensions=[store, hooks]
    )
    await agent.run("Question one")
    await agent.run("Question two")
    history = await store.storage.load("s")
    hooks.armed = True
    store.block_on_draft = (op, when) == ("regenerate", "after")
    if op == "edit":
        target = history[0] if which == "first" else history[2]
        events = agent.stream_edit(target.id, EDITED)
    else:
        events = agent.stream_regenerate(history[1].id if which == "first" else None)
    async for _event in events:
        pass


def main() -> None:
    asyncio.run(run(*sys.argv[1:5]))


if __name__ == "__main__":
    main()

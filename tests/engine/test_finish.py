"""`engine._finish.finish`: what a cancelled caller gets, and that the work always ends."""

from __future__ import annotations

import asyncio
import threading

import pytest

from engine._finish import finish


async def test_without_a_cancel_it_returns_the_result() -> None:
    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert await finish(work()) == 7


async def test_a_failure_without_a_cancel_is_raised() -> None:
    async def work() -> None:
        raise ValueError("disk")

    with pytest.raises(ValueError, match="disk"):
        await finish(work())


async def _cancel_while_running(
    work_done: list[str], *, fail: bool, cancels: int
) -> asyncio.Task[None]:
    started = asyncio.Event()
    release = asyncio.Event()

    async def work() -> None:
        started.set()
        await release.wait()
        if fail:
            raise OSError("the disk is full")
        work_done.append("stored")

    caller = asyncio.ensure_future(finish(work()))
    await started.wait()
    for _ in range(cancels):
        caller.cancel()
        await asyncio.sleep(0)  # let the cancel land in the caller
    assert not caller.done(), "the caller waits for the work it started"
    release.set()
    return caller


@pytest.mark.parametrize("cancels", [1, 3])
async def test_a_cancelled_caller_waits_for_the_work_then_is_cancelled(cancels: int) -> None:
    done: list[str] = []
    caller = await _cancel_while_running(done, fail=False, cancels=cancels)
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert done == ["stored"]


async def test_work_that_fails_after_the_cancel_raises_its_own_error() -> None:
    caller = await _cancel_while_running([], fail=True, cancels=1)
    with pytest.raises(OSError, match="full"):
        await caller


async def test_work_that_is_itself_cancelled_raises_cancelled() -> None:
    async def work() -> None:
        await asyncio.Event().wait()

    task = asyncio.ensure_future(work())
    caller = asyncio.ensure_future(finish(task))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert task.cancelled()


async def test_a_given_task_can_be_looked_at_after_the_cancel() -> None:
    async def work() -> str:
        await asyncio.sleep(0)
        return "lease"

    task = asyncio.ensure_future(work())
    caller = asyncio.ensure_future(finish(task))
    await asyncio.sleep(0)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert task.done() and task.result() == "lease"


async def test_on_cancel_asks_the_work_to_stop_once() -> None:
    stop = threading.Event()
    asked: list[str] = []
    started = asyncio.Event()

    def work() -> str:
        loop.call_soon_threadsafe(started.set)
        stop.wait(30)  # a worker thread that looks at its stop event (30 s: only a hang)
        return "stopped early"

    def stopping() -> None:
        asked.append("stop")
        stop.set()

    loop = asyncio.get_running_loop()
    caller = asyncio.ensure_future(finish(asyncio.to_thread(work), on_cancel=stopping))
    await started.wait()
    caller.cancel()
    await asyncio.sleep(0)
    caller.cancel()  # a second cancel asks nothing again
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert asked == ["stop"]


async def test_discard_on_cancel_raises_cancelled_even_if_the_work_failed() -> None:
    caller_done: list[str] = []

    started = asyncio.Event()
    release = asyncio.Event()

    async def work() -> None:
        started.set()
        await release.wait()
        raise OSError("stopped half-way, as asked")

    async def caller() -> None:
        try:
            await finish(work(), on_cancel=release.set, discard_on_cancel=True)
        finally:
            caller_done.append("after the work")

    task = asyncio.ensure_future(caller())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert caller_done == ["after the work"]


async def test_discard_on_cancel_keeps_a_failure_when_not_cancelled() -> None:
    async def work() -> None:
        raise OSError("disk")

    with pytest.raises(OSError, match="disk"):
        await finish(work(), discard_on_cancel=True)

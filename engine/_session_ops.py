"""Operations on a stored conversation that take its lease themselves, and need no model.

A host changes a conversation outside a request in two ways: it shows another version
(`switch_version`: the "‹ 2/3 ›" switcher), and it settles a draft a dead process left
(`settle_draft`: the answer that process was streaming becomes a message, for instance before
the conversation is copied). Each takes the session's lease for its write, like a request,
so it never changes the history under a running request (`AgentBusyError` instead), and
gives it back, even if its caller is cancelled meanwhile.
"""

from __future__ import annotations

import uuid

from ._finish import finish
from .extensions import RunContext
from .store import SessionStore

__all__ = ["settle_draft", "switch_version"]


async def switch_version(store: SessionStore, session_id: str, message_id: str) -> str:
    """Make the newest leaf under ``message_id`` the active leaf; return that leaf's id.

    Raises:
        AgentBusyError: a request is running on the session.
        MessageNotFoundError: there is no such message.
    """
    ctx = RunContext(session_id, uuid.uuid4().hex, None)
    await store.acquire(ctx)
    try:
        return await store.switch_to(ctx, message_id)
    finally:
        await finish(store.release(ctx))


async def settle_draft(store: SessionStore, session_id: str) -> bool:
    """Turn the draft a dead process left into the message it becomes; False if none.

    A draft whose writer is alive (a request streaming right now) is that request's and is
    left alone. The store settles the draft as the lease is taken (`SessionStore.acquire`).

    Raises:
        AgentBusyError: a request took the session meanwhile.
    """
    ctx = RunContext(session_id, uuid.uuid4().hex, None)
    if await store.restore_draft(ctx) is None:
        return False
    await store.acquire(ctx)
    await finish(store.release(ctx))
    return True

"""Many rounds of every fault through every adapter and the agent (``make stress`` only).

The same scenarios as test_agent_faults.py, repeated, to shake out timing-dependent
behaviour: a reset racing the client's read, a stall racing the timeout, pooled
connections reused after a broken stream.
"""

from __future__ import annotations

import pytest

from engine import AssistantMessage, ResumeKind, StopReason
from tests.providers.test_agent_faults import CASES, RESUMED, get_weather

pytestmark = pytest.mark.stress

ROUNDS = 10


@pytest.mark.parametrize("name", list(CASES))
async def test_fault_rounds(server, make_adapter, store, protocol, name) -> None:
    case = CASES[name]
    model = make_adapter(protocol, max_attempts=1, timeout=0.5)
    for number in range(ROUNDS):
        session = f"s{number}"
        server.script(case.turn)
        agent = await store.agent(model, session_id=session, tools=[get_weather])
        with pytest.raises(case.raised):
            await agent.run("Tell me about the weather.")
        history = await store.history(session)
        if case.partial_raw is None:
            assert len(history) == 1
        else:
            assert isinstance(history[-1], AssistantMessage)
            assert history[-1].stop.reason is StopReason.INTERRUPTED
        point = await agent.resume_point()
        assert point is not None and point.kind is case.kind
        final = await agent.resume()
        assert final.content == RESUMED
        assert point.kind in (ResumeKind.CALL_MODEL, ResumeKind.RETRY_RESPONSE)

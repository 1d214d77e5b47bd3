"""The loopback provider server itself: byte-for-byte samples, the script, the record, the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from engine.messages import UserMessage
from engine.model import ModelRequest, ToolSpec
from engine.providers import OpenAIChatModel
from tests.support.provider_server import WIRE_SAMPLES, ProviderServer, Turn
from tests.support.wait import read_line_sync

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(
    p.relative_to(WIRE_SAMPLES).as_posix()
    for p in WIRE_SAMPLES.rglob("*")
    if p.suffix in (".sse", ".ndjson")
)


@pytest.mark.parametrize("sample", SAMPLES)
async def test_samples_are_served_byte_for_byte(server, sample) -> None:
    server.script(Turn(sample=sample))
    path = "/api/chat" if sample.endswith(".ndjson") else "/v1/chat/completions"
    async with httpx.AsyncClient() as client:
        response = await client.post(server.url + path, json={"stream": True})
    assert response.status_code == 200
    assert response.content == (WIRE_SAMPLES / sample).read_bytes()


async def test_turns_are_first_in_first_out_then_the_default(server) -> None:
    server.script(Turn(text="one"), Turn(text="two"))
    model = OpenAIChatModel("m", base_url=server.openai_url)
    try:
        answers = []
        for _ in range(3):
            events = [e async for e in model.stream(ModelRequest([UserMessage(content="q")]))]
            answers.append(events[-1].response.message.content)
    finally:
        await model.aclose()
    assert answers == ["one", "two", "Hello from the loopback server."]
    assert server.pending() == 0


async def test_requests_are_recorded(server) -> None:
    model = OpenAIChatModel("m", base_url=server.openai_url, headers={"X-Test": "yes"})
    try:
        async for _ in model.stream(ModelRequest([UserMessage(content="hello")])):
            pass
    finally:
        await model.aclose()
    assert server.wait_for_requests(1, timeout=5)
    (recorded,) = server.chat_requests()
    assert recorded.method == "POST" and recorded.path == "/v1/chat/completions"
    assert recorded.protocol == "openai"
    assert recorded.headers["x-test"] == "yes"
    assert recorded.body["messages"] == [{"role": "user", "content": "hello"}]
    assert recorded.last_user_text() == "hello"


async def test_friendly_default_echoes_and_calls_a_tool_when_asked() -> None:
    tool = ToolSpec("get_time", "What time is it.", {"type": "object", "properties": {}})
    with ProviderServer() as server:
        model = OpenAIChatModel("m", base_url=server.openai_url)
        try:
            events = [
                e async for e in model.stream(ModelRequest([UserMessage(content="Hi there")]))
            ]
            echoed = events[-1].response.message
            events = [
                e
                async for e in model.stream(
                    ModelRequest([UserMessage(content="use a tool please")], tools=[tool])
                )
            ]
            called = events[-1].response.message
        finally:
            await model.aclose()
    assert "> Hi there" in echoed.content and "**loopback provider**" in echoed.content
    assert echoed.reasoning
    assert [c.name for c in called.tool_calls] == ["get_time"]


def test_runs_by_hand_and_prints_its_urls() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.provider_server"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [read_line_sync(process.stdout, "the URLs") for _ in range(4)]
        assert lines[0].startswith("Loopback provider running")
        urls = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in lines[1:]}
        openai_url = urls["OpenAI-compatible base URL"]
        assert openai_url.startswith("http://127.0.0.1:") and openai_url.endswith("/v1")
        assert urls["Ollama base URL"] == urls["Anthropic base URL"] == openai_url[:-3]
        response = httpx.get(openai_url + "/models", timeout=5)
        assert response.json()["data"][0]["id"] == "loopback-echo"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process.stdout.close()

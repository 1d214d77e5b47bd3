"""The first-run probe against real HTTP servers on 127.0.0.1, on injected ports."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ui.settings.first_run import LocalServer, discover, env_key_providers, probe_local_servers

SECRET = "sk-ant-env-0123456789-NEVER-SHOWN"


def _serve(routes: dict[str, tuple[int, str, bytes]]) -> Iterator[int]:
    """Run a loopback HTTP server answering ``routes`` (path → status, type, body)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            status, content_type, body = routes.get(self.path, (404, "text/plain", b"no"))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def ollama_port() -> Iterator[int]:
    body = json.dumps({"models": [{"name": "llama3.2:3b"}, {"name": "qwen2.5:7b"}]}).encode()
    yield from _serve({"/api/tags": (200, "application/json", body)})


@pytest.fixture
def openai_port() -> Iterator[int]:
    body = json.dumps({"object": "list", "data": [{"id": "local-model", "object": "model"}]})
    yield from _serve({"/v1/models": (200, "application/json", body.encode())})


@pytest.fixture
def stranger_port() -> Iterator[int]:
    """Some other web server: answers, but not like a model server."""
    page = b"<html>router admin</html>"
    yield from _serve(
        {"/v1/models": (200, "text/html", page), "/api/tags": (200, "text/html", page)}
    )


@pytest.fixture
def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


async def test_probe_finds_servers_on_injected_ports(
    ollama_port, openai_port, stranger_port, refused_port, silent_port
) -> None:
    servers = [
        LocalServer("Ollama", "ollama", ollama_port),
        LocalServer("LM Studio", "openai", openai_port),
        LocalServer("llama.cpp", "openai", stranger_port),
        LocalServer("vLLM", "openai", refused_port),
        LocalServer("Hung", "openai", silent_port),
    ]
    found = await probe_local_servers(servers, probe_timeout=0.5)

    assert [(c.name, c.kind) for c in found] == [("Ollama", "ollama"), ("LM Studio", "openai")]
    ollama, lm_studio = found
    assert ollama.base_url == f"http://127.0.0.1:{ollama_port}"
    assert ollama.default_model == "llama3.2:3b"
    assert lm_studio.base_url == f"http://127.0.0.1:{openai_port}/v1"
    assert lm_studio.default_model == "local-model"
    assert ollama.id != lm_studio.id


async def test_probe_with_nothing_running_finds_nothing(refused_port) -> None:
    assert await probe_local_servers([LocalServer("Ollama", "ollama", refused_port)]) == []


def test_env_keys_are_offered_without_showing_them() -> None:
    found = env_key_providers({"ANTHROPIC_API_KEY": SECRET, "OPENAI_API_KEY": "  ", "PATH": "/x"})
    assert len(found) == 1
    (anthropic,) = found
    assert anthropic.config.kind == "anthropic"
    assert anthropic.config.base_url == "https://api.anthropic.com"
    assert anthropic.source == "ANTHROPIC_API_KEY"
    assert anthropic.api_key is not None and anthropic.api_key.reveal() == SECRET
    assert SECRET not in repr(anthropic) and SECRET not in str(anthropic)


async def test_discover_lists_servers_then_keys(ollama_port) -> None:
    found = await discover(
        [LocalServer("Ollama", "ollama", ollama_port)], environ={"OPENAI_API_KEY": SECRET}
    )
    assert [(d.config.name, d.source) for d in found] == [
        ("Ollama", f"127.0.0.1:{ollama_port}"),
        ("OpenAI", "OPENAI_API_KEY"),
    ]
    assert found[0].models == ("llama3.2:3b", "qwen2.5:7b")

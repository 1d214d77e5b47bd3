"""A loopback model provider: a real HTTP server on 127.0.0.1 that speaks three wire protocols.

It answers OpenAI Chat Completions (``/v1/chat/completions``, SSE), Anthropic Messages
(``/v1/messages``, SSE) and Ollama (``/api/chat``, NDJSON), plus their model lists, from
scripted `Turn`s, and injects the faults a real network produces. It runs in a background
thread so that engine, UI and packaging tests (and a person, offline) can all use it::

    with ProviderServer() as server:
        server.script(Turn(text="Hello"), Turn(fault=Fault.RESET, fault_after=3))
        model = OpenAIChatModel("loopback", base_url=server.openai_url)
        ...
        assert len(server.requests) == 2

Turns are served first-in first-out; when none is queued, ``server.default`` (a `Turn`, or a
function of the `RecordedRequest` returning one) answers: by default `echo_turn`, which
echoes the person's text back slowly with a little Markdown, and calls a tool when asked.
Every request is recorded (`server.requests`) with its path, headers and JSON body.

Stalls wait on an event that `close()` (or `release_stalls()`) sets, so no test hangs on
them; the test side waits on its client's timeout, never on a sleep. A turn's ``delay`` paces
the server's own output (a slow drip), which is the server's business, not a test's.

The recorded wire samples (tests/wire_samples/, never edited) are served byte for byte with
``Turn(sample="openai/tool-call-single.sse")``; a recorded error body with its status, e.g.
``Turn(status=400, sample="compat/llamacpp-context-nostream.response.json")``.

Run it by hand: ``python -m tests.support.provider_server [--port 8765]``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .provider_wire import (
    ANTHROPIC,
    CONTENT_TYPES,
    CONTEXT_ERRORS,
    HUGE_LINE_STARTS,
    KEEPALIVE,
    MALFORMED,
    OLLAMA,
    OPENAI,
    PINGS,
    Fault,
    ScriptedCall,
    Turn,
    dumps,
    error_body,
    error_event,
    render,
)

__all__ = [
    "WIRE_SAMPLES",
    "Fault",
    "ProviderServer",
    "RecordedRequest",
    "ScriptedCall",
    "Turn",
    "echo_turn",
    "echoing_credentials",
    "main",
    "render",
]

WIRE_SAMPLES = Path(__file__).resolve().parent.parent / "wire_samples"

#: the Content-Type a recorded body is served with, by its file suffix
SAMPLE_TYPES = {".ndjson": "application/x-ndjson", ".json": "application/json"}


@dataclass
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]  #: lower-cased names
    body: Any  #: parsed JSON, or None
    received_at: float  #: time.monotonic() when the body had been read
    protocol: str | None = None  #: openai / anthropic / ollama for chat requests

    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages") or [])

    def last_user_text(self) -> str:
        """The text of the last user-role message, in any of the three formats."""
        for message in reversed(self.messages()):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [b.get("text", "") for b in content or () if b.get("type") == "text"]
            if texts:
                return "\n".join(texts)
        return ""

    def last_is_tool_result(self) -> bool:
        messages = self.messages()
        if not messages:
            return False
        last = messages[-1]
        if last.get("role") == "tool":
            return True
        content = last.get("content")
        return isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )

    def tool_names(self) -> list[str]:
        names = []
        for tool in (self.body or {}).get("tools") or ():
            names.append((tool.get("function") or tool).get("name", ""))
        return names


def echoing_credentials(status: int = 401) -> Callable[[RecordedRequest], Turn]:
    """A hostile server's answer: an error whose text quotes the credential headers it got,
    as sent (``Authorization: Basic <base64 of user:key>``, ``Bearer <key>``, ``x-api-key``)
    and in base64 (alone, after a prefix, in URL-safe base64), as debugging proxies do."""

    def answer(request: RecordedRequest) -> Turn:
        quoted = []
        for name in ("authorization", "x-api-key", "api-key"):
            value = request.headers.get(name)
            if value is None:
                continue
            secret = value.split()[-1].encode()
            if value.lower().startswith("basic "):
                secret = base64.b64decode(secret)  # user:key
            quoted += [
                f"{name}: {value}",
                f"b64={base64.b64encode(secret).decode()}",
                f"prefixed={base64.b64encode(b'k=' + secret).decode()}",
                f"urlsafe={base64.urlsafe_b64encode(b'x' + secret).decode()}",
            ]
        return Turn(status=status, error="Refused. You sent " + "; ".join(quoted))

    return answer


def echo_turn(request: RecordedRequest) -> Turn:
    """The friendly default: echo the person's text slowly, and call a tool when asked."""
    text = request.last_user_text()
    if request.last_is_tool_result():
        return Turn(text="The tool answered; that is all I needed. **Done.**", delay=0.02)
    tools = request.tool_names()
    if tools and "tool" in text.lower():
        return Turn(
            text="Let me use a tool for that.",
            tool_calls=[ScriptedCall(tools[0], {})],
            delay=0.02,
        )
    answer = (
        f"You said:\n\n> {text}\n\n"
        "This answer comes from the **loopback provider**, so it works offline:\n\n"
        f"- {len(text)} characters\n- {len(text.split())} words\n\n"
        "```text\n" + text[:200] + "\n```\n"
    )
    return Turn(text=answer, reasoning="Echo the message back.", delay=0.02, chunk_size=6)


# ---------------------------------------------------------------------------- the server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
        if self.server.owner.verbose:
            super().log_message(format, *args)

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            super().finish()
        self.server.owner._track(self.connection, add=False)

    # -- routing -----------------------------------------------------------------------

    def do_GET(self) -> None:
        self._record(None)
        owner = self.server.owner
        path = self.path.split("?")[0]
        if path in ("/", ""):
            self._send_bytes(200, b"Ollama is running", "text/plain")
        elif owner.models_turn is not None and path in ("/v1/models", "/api/tags"):
            self._answer(
                owner.models_turn,
                ANTHROPIC
                if "anthropic-version" in self.headers
                else OLLAMA
                if path == "/api/tags"
                else OPENAI,
                {},
            )
        elif path == "/v1/models" and "anthropic-version" in self.headers:
            data = [
                {
                    "type": "model",
                    "id": m,
                    "display_name": m.replace("-", " ").title(),
                    "created_at": "2026-01-01T00:00:00Z",
                }
                for m in owner.models
            ]
            self._send_json(
                200,
                {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                },
            )
        elif path == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "loopback"}
                        for m in owner.models
                    ],
                },
            )
        elif path == "/api/tags":
            self._send_json(
                200,
                {
                    "models": [
                        {
                            "name": f"{m}:latest",
                            "model": f"{m}:latest",
                            "size": 1,
                            "digest": "0" * 64,
                            "modified_at": "2026-01-01T00:00:00Z",
                            "details": {"format": "gguf"},
                        }
                        for m in owner.models
                    ]
                },
            )
        elif path == "/api/version":
            self._send_json(200, {"version": "0.0.0-loopback"})
        else:
            self._send_json(404, {"error": f"no route {path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?")[0]
        protocol = (
            OPENAI
            if path.endswith("/chat/completions")
            else ANTHROPIC
            if path == "/v1/messages"
            else OLLAMA
            if path == "/api/chat"
            else None
        )
        request = self._record(body, protocol)
        if protocol is None:
            self._send_json(404, {"error": f"no route {path}"})
            return
        turn = self.server.owner._next_turn(request)
        self._answer(turn, protocol, body or {})

    def _record(self, body: Any, protocol: str | None = None) -> RecordedRequest:
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            received_at=time.monotonic(),
            protocol=protocol,
        )
        self.server.owner._add_request(request)
        return request

    # -- answering ---------------------------------------------------------------------

    def _answer(self, turn: Turn, protocol: str, body: Mapping[str, Any]) -> None:
        owner = self.server.owner
        if turn.fault == Fault.REFUSE:
            self._reset()
            return
        if turn.fault == Fault.STALL_HEADERS:
            owner._released.wait(owner.stall_limit)
            self._reset()
            return
        if turn.sample is not None:
            # A recorded body, with the status it came with (a recorded error is a .json).
            path = WIRE_SAMPLES / turn.sample
            kind = SAMPLE_TYPES.get(path.suffix, "text/event-stream")
            self._send_bytes(turn.status, path.read_bytes(), kind)
            return
        if turn.fault == Fault.ENDLESS_ERROR:
            self._endless_error(turn, protocol)
            return
        if turn.fault == Fault.DRIP:
            self._drip(turn, protocol)
            return
        if turn.status != 200:
            extra = {"Retry-After": turn.retry_after} if turn.retry_after else {}
            self._send_json(turn.status, error_body(protocol, turn.status, turn.error), extra)
            return
        if turn.stop == "context_full":
            self._send_json(400, CONTEXT_ERRORS[protocol])
            return
        if turn.body is not None:
            self._send_bytes(200, turn.body, turn.content_type or CONTENT_TYPES[protocol])
            return
        model = str(body.get("model") or "loopback")
        events = render(turn, protocol, body, model)
        self._stream(turn, protocol, events)

    def _stream(self, turn: Turn, protocol: str, events: list[bytes]) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPES[protocol])
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        pending = bytearray()

        def flush() -> None:
            if pending:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(pending), bytes(pending)))
                pending.clear()

        strike = turn.fault in (
            Fault.STALL_MIDSTREAM,
            Fault.RESET,
            Fault.ERROR_EVENT,
            Fault.MALFORMED,
            Fault.HUGE_LINE,
            Fault.PINGS,
        )
        try:
            for number, event in enumerate(events):
                if strike and number == turn.fault_after:
                    break
                if turn.delay:
                    flush()
                    if owner._released.wait(turn.delay):
                        self._reset()
                        return
                if turn.keepalive and number:
                    pending += KEEPALIVE[protocol]
                pending += event
                if len(pending) >= 65536:
                    flush()
            else:
                strike = False
            if strike:
                if turn.fault in (Fault.HUGE_LINE, Fault.PINGS):
                    flush()
                    self._hostile_tail(turn, protocol, flush, pending)
                    return
                if turn.fault == Fault.STALL_MIDSTREAM:
                    flush()
                    owner._released.wait(owner.stall_limit)
                    self._reset()
                    return
                if turn.fault == Fault.RESET:
                    nxt = events[turn.fault_after] if turn.fault_after < len(events) else b"d"
                    pending += nxt[: max(1, len(nxt) // 2)]
                    flush()
                    # A reset discards data the client has not read yet; give a loopback
                    # client a moment to read what was sent, so "after N events" holds.
                    owner._released.wait(owner.reset_grace)
                    self._reset()
                    return
                if turn.fault == Fault.ERROR_EVENT:
                    pending += error_event(protocol, turn.error)
                else:
                    pending += MALFORMED[protocol]
            flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _hostile_tail(
        self, turn: Turn, protocol: str, flush: Callable[[], None], pending: bytearray
    ) -> None:
        """After the first events: a line that never ends, or keep-alives only."""
        owner = self.server.owner
        sent = 0
        try:
            if turn.fault == Fault.PINGS:
                ends = time.monotonic() + owner.stall_limit
                while time.monotonic() < ends and not owner._released.wait(turn.delay or 0.05):
                    pending += PINGS[protocol] or b"\n"
                    sent += len(pending)
                    flush()
                self._reset()
                return
            pending += HUGE_LINE_STARTS[protocol]
            block = b"x" * 65536
            while sent < turn.hostile_bytes and not owner._released.is_set():
                pending += block
                sent += len(pending)
                flush()
            self.wfile.write(b"0\r\n\r\n")  # the body ends; the line never did
        except OSError:
            self.close_connection = True
        finally:
            owner._note_hostile(sent)

    def _endless_error(self, turn: Turn, protocol: str) -> None:
        """An error status whose JSON body never ends (until ``hostile_bytes`` or hang-up)."""
        owner = self.server.owner
        sent = 0
        try:
            self.send_response(turn.status if turn.status != 200 else 500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            head = dumps(error_body(protocol, turn.status, turn.error or "endless"))
            first = head[: head.rindex('"')].encode()  # inside the message string
            block = b"y" * 65536
            for piece in [first, *([block] * (turn.hostile_bytes // len(block)))]:
                if owner._released.is_set():
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True
        finally:
            owner._note_hostile(sent)

    def _drip(self, turn: Turn, protocol: str) -> None:
        """A JSON body one byte every ``turn.delay`` seconds (until released, the stall
        limit, or hang-up): every read is quick, the whole never comes."""
        owner = self.server.owner
        sent = 0
        try:
            self.send_response(turn.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            body = dumps(error_body(protocol, turn.status, turn.error or "slow " * 1000))
            ends = time.monotonic() + owner.stall_limit
            for byte in body.encode():
                if time.monotonic() > ends or owner._released.wait(turn.delay or 0.05):
                    break
                self.wfile.write(b"1\r\n%c\r\n" % byte)
                self.wfile.flush()
                sent += 1
            self._reset()
        except OSError:
            self.close_connection = True
        finally:
            owner._note_hostile(sent)

    def _send_json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, dumps(data).encode(), "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, kind: str, headers: Mapping[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True

    def _reset(self) -> None:
        """Abort the connection with a TCP reset (SO_LINGER 0), as a dropped network does."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ProviderServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-answer is normal here (tests cancel and time out).
        pass


class ProviderServer:
    """The loopback provider, in a background thread. Use as a context manager.

    Args:
        host: the address to bind (loopback by default).
        port: 0 for a random free port.
        default: what answers when no turn is queued: a `Turn`, or a function of the
            `RecordedRequest` returning one (`echo_turn` by default).
        models: model ids for the model lists.
        stall_limit: the longest a stall lasts when nobody closes the server (seconds).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        default: Turn | Callable[[RecordedRequest], Turn] | None = None,
        models: Sequence[str] = ("loopback-echo", "loopback-think"),
        stall_limit: float = 60.0,
        verbose: bool = False,
    ) -> None:
        self.default: Turn | Callable[[RecordedRequest], Turn] = default or echo_turn
        self.models = list(models)
        #: when set, answers the model lists instead (a status, a fault such as DRIP)
        self.models_turn: Turn | None = None
        self.stall_limit = stall_limit
        self.reset_grace = 0.2
        self.verbose = verbose
        self.requests: list[RecordedRequest] = []
        #: bytes each hostile answer (huge line, pings, endless error) sent before it stopped
        self.hostile_sent: list[int] = []
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._released = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer((host, port), self)
        self._thread: threading.Thread | None = None

    # -- addresses ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    @property
    def ollama_url(self) -> str:
        return self.url

    # -- script ------------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Queue turns, served first-in first-out before the default."""
        with self._lock:
            self._turns.extend(turns)

    def pending(self) -> int:
        """How many queued turns have not been served yet."""
        with self._lock:
            return len(self._turns)

    def chat_requests(self) -> list[RecordedRequest]:
        """The chat (POST) requests received, in order."""
        with self._lock:
            return [r for r in self.requests if r.protocol is not None]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until at least ``count`` requests arrived (or the timeout passed)."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.requests) >= count, timeout)

    def wait_for_hostile(self, count: int, timeout: float = 30.0) -> list[int]:
        """Block until ``count`` hostile answers have stopped; return what each sent."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.hostile_sent) >= count, timeout)
            return list(self.hostile_sent)

    def release_stalls(self) -> None:
        """End every stall now (each stalled connection is then reset)."""
        self._released.set()

    # -- lifetime ----------------------------------------------------------------------

    def start(self) -> ProviderServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="provider-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; release stalls; reset open connections. Safe to call twice."""
        self._released.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- used by the handler -----------------------------------------------------------

    def _next_turn(self, request: RecordedRequest) -> Turn:
        with self._lock:
            if self._turns:
                return self._turns.popleft()
        default = self.default
        return default(request) if callable(default) else default

    def _add_request(self, request: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()

    def _note_hostile(self, sent: int) -> None:
        with self._changed:
            self.hostile_sent.append(sent)
            self._changed.notify_all()

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the friendly default script until interrupted (Ctrl+C)."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.provider_server",
        description="A loopback model provider (OpenAI, Anthropic and Ollama protocols) for "
        "running Continuo offline. It echoes what you type, and calls a tool when you ask.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    server = ProviderServer(args.host, args.port, verbose=args.verbose).start()
    print("Loopback provider running. Use any API key and any model name.")
    print(f"  OpenAI-compatible base URL: {server.openai_url}")
    print(f"  Anthropic base URL:         {server.anthropic_url}")
    print(f"  Ollama base URL:            {server.ollama_url}")
    print("Press Ctrl+C to stop.", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

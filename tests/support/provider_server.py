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
``Turn(sample="openai/tool-call-single.sse")``.

Run it by hand: ``python -m tests.support.provider_server [--port 8765]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "WIRE_SAMPLES",
    "Fault",
    "ProviderServer",
    "RecordedRequest",
    "ScriptedCall",
    "Turn",
    "echo_turn",
    "main",
]

WIRE_SAMPLES = Path(__file__).resolve().parent.parent / "wire_samples"

OPENAI, ANTHROPIC, OLLAMA = "openai", "anthropic", "ollama"


class Fault(StrEnum):
    """What goes wrong with one response."""

    REFUSE = "refuse"  #: read the request, then reset the connection without answering
    STALL_HEADERS = "stall_headers"  #: read the request, send nothing until released
    STALL_MIDSTREAM = "stall_midstream"  #: send ``fault_after`` events, then nothing
    RESET = "reset"  #: send ``fault_after`` events and half the next, then reset (RST)
    ERROR_EVENT = "error_event"  #: after ``fault_after`` events, an error inside the 200 stream
    MALFORMED = "malformed"  #: after ``fault_after`` events, an event whose JSON is cut
    CUT_TOOL_ARGS = "cut_tool_args"  #: tool-call arguments stop mid-JSON; the stream ends


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call for a `Turn` to emit. ``arguments`` may be a raw (even broken) string."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass
class Turn:
    """One scripted response, rendered in whichever protocol the request used.

    Attributes:
        text: the answer, sent in pieces of ``chunk_size`` characters.
        reasoning: reasoning / thinking sent before the text.
        tool_calls: `ScriptedCall`s (or ``(name, arguments)`` pairs) after the text.
        stop: ``end_turn``, ``tool_use``, ``max_output``, ``refusal``, ``paused``,
            ``context_full`` (an HTTP 400 context-length error) or None (tool_use when there
            are tool calls, else end_turn).
        raw_stop: the exact provider stop value to send, overriding ``stop``'s mapping.
        chunk_size: characters per text/reasoning/argument piece.
        delay: seconds the server waits before each event (a slow drip).
        fault: a `Fault`, or None.
        fault_after: events sent before the fault strikes (0: before any output).
        status: an HTTP error status to answer with instead (429, 500, 529, 401...).
        error: the message of that status error or of an error event.
        retry_after: the ``Retry-After`` header value to send with the status.
        keepalive: put a keep-alive (SSE comment for OpenAI, ``ping`` for Anthropic) between
            events.
        sample: a file under tests/wire_samples/ to serve byte for byte instead.
        body: raw bytes to serve as a 200 stream instead (benchmarks pre-render these).
        usage: (input tokens, output tokens) to report.
    """

    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[ScriptedCall | tuple[str, Any]] = ()
    stop: str | None = None
    raw_stop: str | None = None
    chunk_size: int = 8
    delay: float = 0.0
    fault: Fault | None = None
    fault_after: int = 2
    status: int = 200
    error: str = ""
    retry_after: str | None = None
    keepalive: bool = False
    sample: str | None = None
    body: bytes | None = None
    usage: tuple[int, int] = (12, 34)

    def calls(self) -> list[ScriptedCall]:
        return [c if isinstance(c, ScriptedCall) else ScriptedCall(*c) for c in self.tool_calls]


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


# ---------------------------------------------------------------------------- rendering


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _dumps(obj: Any) -> str:
    # ensure_ascii=False: U+2028 and friends go on the wire raw, as real providers send them.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else _dumps(data)
    return f"{head}data: {payload}\n\n".encode()


_RAW_STOPS = {
    OPENAI: {"end_turn": "stop", "tool_use": "tool_calls", "max_output": "length",
             "refusal": "stop", "paused": "stop", "other": "unexpected_reason"},
    ANTHROPIC: {"end_turn": "end_turn", "tool_use": "tool_use", "max_output": "max_tokens",
                "refusal": "refusal", "paused": "pause_turn", "other": "unexpected_reason"},
    OLLAMA: {"end_turn": "stop", "tool_use": "stop", "max_output": "length",
             "refusal": "stop", "paused": "stop", "other": "unexpected_reason"},
}


def _raw_stop(turn: Turn, protocol: str) -> str:
    if turn.raw_stop:
        return turn.raw_stop
    stop = turn.stop or ("tool_use" if turn.tool_calls else "end_turn")
    return _RAW_STOPS[protocol][stop]


def render(turn: Turn, protocol: str, request_body: Any = None, model: str = "loopback") -> list[bytes]:
    """Render a turn's 200 stream as a list of events (bytes), faults of content included."""
    request_body = request_body or {}
    if protocol == OPENAI:
        return _render_openai(turn, request_body, model)
    if protocol == ANTHROPIC:
        return _render_anthropic(turn, model)
    return _render_ollama(turn, model)


def _cut(text: str) -> str:
    return text[: max(1, len(text) // 2)]


def _render_openai(turn: Turn, body: Mapping[str, Any], model: str) -> list[bytes]:
    cid = f"chatcmpl-loop{uuid.uuid4().hex[:12]}"
    created = int(time.time())

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        return _sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                     "model": model, "choices": [{"index": 0, "delta": delta,
                                                  "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in _pieces(turn.reasoning, turn.chunk_size)]
    field_name = "refusal" if turn.stop == "refusal" else "content"
    events += [chunk({field_name: p}) for p in _pieces(turn.text, turn.chunk_size)]
    for index, call in enumerate(turn.calls()):
        call_id = call.id or f"call_{uuid.uuid4().hex[:16]}"
        events.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        args = call.arguments_text()
        if turn.fault == Fault.CUT_TOOL_ARGS:
            args = _cut(args)
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                   for p in _pieces(args, turn.chunk_size)]
        if turn.fault == Fault.CUT_TOOL_ARGS:
            return events
    events.append(chunk({}, _raw_stop(turn, OPENAI)))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(_sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                            "model": model, "choices": [],
                            "usage": {"prompt_tokens": turn.usage[0],
                                      "completion_tokens": turn.usage[1],
                                      "total_tokens": sum(turn.usage)}}))
    events.append(b"data: [DONE]\n\n")
    return events


def _render_anthropic(turn: Turn, model: str) -> list[bytes]:
    events = [
        _sse({"type": "message_start", "message": {
            "id": f"msg_loop{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": turn.usage[0], "output_tokens": 1}}}, "message_start"),
        _sse({"type": "ping"}, "ping"),
    ]
    index = 0

    def block(start: Mapping[str, Any], deltas: list[Mapping[str, Any]], stop: bool = True) -> None:
        nonlocal index
        events.append(_sse({"type": "content_block_start", "index": index,
                            "content_block": start}, "content_block_start"))
        for delta in deltas:
            events.append(_sse({"type": "content_block_delta", "index": index, "delta": delta},
                               "content_block_delta"))
        if stop:
            events.append(_sse({"type": "content_block_stop", "index": index},
                               "content_block_stop"))
        index += 1

    if turn.reasoning:
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": p}
               for p in _pieces(turn.reasoning, turn.chunk_size)]
              + [{"type": "signature_delta", "signature": f"sig-{uuid.uuid4().hex}"}])
    if turn.text:
        block({"type": "text", "text": ""},
              [{"type": "text_delta", "text": p} for p in _pieces(turn.text, turn.chunk_size)])
    for call in turn.calls():
        args = call.arguments_text()
        cut = turn.fault == Fault.CUT_TOOL_ARGS
        if cut:
            args = _cut(args)
        block({"type": "tool_use", "id": call.id or f"toolu_{uuid.uuid4().hex[:20]}",
               "name": call.name, "input": {}},
              [{"type": "input_json_delta", "partial_json": p}
               for p in ["", *_pieces(args, turn.chunk_size)]], stop=not cut)
        if cut:
            return events
    events.append(_sse({"type": "message_delta",
                        "delta": {"stop_reason": _raw_stop(turn, ANTHROPIC),
                                  "stop_sequence": None},
                        "usage": {"output_tokens": turn.usage[1]}}, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _render_ollama(turn: Turn, model: str) -> list[bytes]:
    def line(message: Mapping[str, Any], **extra: Any) -> bytes:
        return (_dumps({"model": model, "created_at": "2026-01-01T00:00:00Z",
                        "message": {"role": "assistant", **message}, "done": False, **extra})
                + "\n").encode()

    events = [line({"content": "", "thinking": p})
              for p in _pieces(turn.reasoning, turn.chunk_size)]
    events += [line({"content": p}) for p in _pieces(turn.text, turn.chunk_size)]
    calls = turn.calls()
    if calls:
        whole = line({"content": "", "tool_calls": [
            {"function": {"name": c.name, "arguments": c.arguments if isinstance(
                c.arguments, Mapping) else json.loads(c.arguments)}} for c in calls]})
        if turn.fault == Fault.CUT_TOOL_ARGS:
            # Ollama sends whole calls; cut mid-JSON means the line itself ends early.
            return [*events, whole[: len(whole) // 2]]
        events.append(whole)
    done = _dumps({"model": model, "created_at": "2026-01-01T00:00:00Z",
                   "message": {"role": "assistant", "content": ""}, "done": True,
                   "done_reason": _raw_stop(turn, OLLAMA),
                   "prompt_eval_count": turn.usage[0], "eval_count": turn.usage[1]})
    return [*events, (done + "\n").encode()]


_KEEPALIVE = {OPENAI: b": keep-alive\n\n", ANTHROPIC: _sse({"type": "ping"}, "ping"), OLLAMA: b""}

_ERROR_EVENTS = {
    OPENAI: _sse({"error": {"message": "The server had an error while processing your request.",
                            "type": "server_error", "code": None}}),
    ANTHROPIC: _sse({"type": "error", "error": {"type": "overloaded_error",
                                                "message": "Overloaded"}}, "error"),
    OLLAMA: b'{"error":"an error was encountered while running the model"}\n',
}

_MALFORMED = {
    OPENAI: b'data: {"choices":[{"index":0,"delta":{"content":"cut\n\n',
    ANTHROPIC: b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"te\n\n',
    OLLAMA: b'{"model":"loopback","message":{"role":"assistant","content":"cu\n',
}

_CONTENT_TYPES = {OPENAI: "text/event-stream", ANTHROPIC: "text/event-stream",
                  OLLAMA: "application/x-ndjson"}

_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                          403: "permission_error", 404: "not_found_error",
                          429: "rate_limit_error", 529: "overloaded_error"}

_CONTEXT_ERRORS = {
    OPENAI: {"error": {"message": "This model's maximum context length is 128000 tokens. However,"
                                  " your messages resulted in 131072 tokens. Please reduce the "
                                  "length of the messages.", "type": "invalid_request_error",
                       "param": "messages", "code": "context_length_exceeded"}},
    ANTHROPIC: {"type": "error", "error": {"type": "invalid_request_error",
                                           "message": "prompt is too long: 208310 tokens > "
                                                      "200000 maximum"}},
    OLLAMA: {"error": "the input length exceeds the context length"},
}


def _error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    message = message or f"Loopback error {status}"
    if protocol == ANTHROPIC:
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == OLLAMA:
        return {"error": message}
    return {"error": {"message": message, "type": "loopback_error", "code": None}}


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
        elif path == "/v1/models" and "anthropic-version" in self.headers:
            data = [{"type": "model", "id": m, "display_name": m.replace("-", " ").title(),
                     "created_at": "2026-01-01T00:00:00Z"} for m in owner.models]
            self._send_json(200, {"data": data, "has_more": False,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})
        elif path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "loopback"}
                for m in owner.models]})
        elif path == "/api/tags":
            self._send_json(200, {"models": [
                {"name": f"{m}:latest", "model": f"{m}:latest", "size": 1, "digest": "0" * 64,
                 "modified_at": "2026-01-01T00:00:00Z", "details": {"format": "gguf"}}
                for m in owner.models]})
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
        protocol = (OPENAI if path.endswith("/chat/completions")
                    else ANTHROPIC if path == "/v1/messages"
                    else OLLAMA if path == "/api/chat" else None)
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
        if turn.status != 200:
            extra = {"Retry-After": turn.retry_after} if turn.retry_after else {}
            self._send_json(turn.status, _error_body(protocol, turn.status, turn.error), extra)
            return
        if turn.stop == "context_full":
            self._send_json(400, _CONTEXT_ERRORS[protocol])
            return
        if turn.sample is not None:
            path = WIRE_SAMPLES / turn.sample
            kind = "application/x-ndjson" if path.suffix == ".ndjson" else "text/event-stream"
            self._send_bytes(200, path.read_bytes(), kind)
            return
        if turn.body is not None:
            self._send_bytes(200, turn.body, _CONTENT_TYPES[protocol])
            return
        model = str(body.get("model") or "loopback")
        events = render(turn, protocol, body, model)
        self._stream(turn, protocol, events)

    def _stream(self, turn: Turn, protocol: str, events: list[bytes]) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", _CONTENT_TYPES[protocol])
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        pending = bytearray()

        def flush() -> None:
            if pending:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(pending), bytes(pending)))
                pending.clear()

        strike = turn.fault in (Fault.STALL_MIDSTREAM, Fault.RESET, Fault.ERROR_EVENT,
                                Fault.MALFORMED)
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
                    pending += _KEEPALIVE[protocol]
                pending += event
                if len(pending) >= 65536:
                    flush()
            else:
                strike = False
            if strike:
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
                pending += (_ERROR_EVENTS if turn.fault == Fault.ERROR_EVENT
                            else _MALFORMED)[protocol]
            flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _send_json(self, status: int, data: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, _dumps(data).encode(), "application/json", headers)

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
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
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
        self.stall_limit = stall_limit
        self.reset_grace = 0.2
        self.verbose = verbose
        self.requests: list[RecordedRequest] = []
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

    def release_stalls(self) -> None:
        """End every stall now (each stalled connection is then reset)."""
        self._released.set()

    # -- lifetime ----------------------------------------------------------------------

    def start(self) -> ProviderServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="provider-server", daemon=True,
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

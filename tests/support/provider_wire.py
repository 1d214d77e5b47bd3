"""The loopback provider's script and wire rendering: what a scripted turn looks like on the wire.

`Turn` (with `ScriptedCall` and `Fault`) describes one response independently of protocol;
`render` turns it into the exact bytes each protocol streams: OpenAI Chat Completions SSE
(``chat.completion.chunk`` events, a usage chunk when asked, ``[DONE]``), Anthropic Messages
SSE (``message_start`` ... ``message_stop`` with ``ping``), and Ollama NDJSON. Faults that
live in the content (an error event, malformed JSON, tool arguments cut mid-JSON) are
rendered here; faults of the connection (refuse, stall, reset) are the server's
(provider_server.py). JSON goes out with ``ensure_ascii=False``, so U+2028 travels raw, as
real providers send it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "ANTHROPIC",
    "CONTENT_TYPES",
    "CONTEXT_ERRORS",
    "ERROR_EVENTS",
    "HUGE_LINE_STARTS",
    "KEEPALIVE",
    "MALFORMED",
    "OLLAMA",
    "OPENAI",
    "PINGS",
    "Fault",
    "ScriptedCall",
    "Turn",
    "dumps",
    "error_body",
    "error_event",
    "render",
]

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
    # Hostile servers (DESIGN.md, "Untrusted input"); each stops at ``hostile_bytes``, when
    # released, or when the client hangs up, and the server notes how much it sent.
    HUGE_LINE = "huge_line"  #: after ``fault_after`` events, a line that never ends
    PINGS = "pings"  #: after ``fault_after`` events, only keep-alives, every ``delay`` seconds
    ENDLESS_ERROR = "endless_error"  #: the ``status`` with an error body that never ends
    #: the ``status`` (200 too) with a JSON body sent one byte every ``delay`` seconds
    DRIP = "drip"


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
        error: the message of that status error or of an error event (an error event
            without one sends the recorded words).
        retry_after: the ``Retry-After`` header value to send with the status.
        keepalive: put a keep-alive (SSE comment for OpenAI, ``ping`` for Anthropic) between
            events.
        sample: a file under tests/wire_samples/ to serve byte for byte instead, with
            ``status`` (a recorded error response is a ``.json`` file).
        body: raw bytes to serve as a 200 stream instead (benchmarks pre-render these).
        content_type: the Content-Type for ``body`` (the protocol's stream type by default).
        usage: (input tokens, output tokens) to report.
        escape_non_ascii: write every non-ASCII character as a JSON ``\\uXXXX`` escape, as
            many servers do. A text holding surrogates then sends them as escapes: an
            emoji's two halves (``"\\ud83d"``, ``"\\ude00"``) split across two events by
            ``chunk_size``, or a lone half no character can be made of.
        hostile_bytes: the most a hostile fault (huge line, endless error) sends.
        numbered_ids: hostile ids: a call without its own ``id`` is sent as ``call_<index>``,
            numbered afresh in every answer (as some servers do), in all three protocols;
            with ``ScriptedCall(id=...)`` any id, repeats included, is sent as given.
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
    content_type: str | None = None
    usage: tuple[int, int] = (12, 34)
    escape_non_ascii: bool = False
    hostile_bytes: int = 50 * 1024 * 1024
    numbered_ids: bool = False

    def calls(self) -> list[ScriptedCall]:
        calls = [c if isinstance(c, ScriptedCall) else ScriptedCall(*c) for c in self.tool_calls]
        if self.numbered_ids:
            calls = [
                c if c.id is not None else ScriptedCall(c.name, c.arguments, f"call_{i}")
                for i, c in enumerate(calls)
            ]
        return calls


# ---------------------------------------------------------------------------- rendering


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


#: set while a turn with ``escape_non_ascii`` is rendered
_ESCAPE_NON_ASCII: ContextVar[bool] = ContextVar("escape_non_ascii", default=False)


def dumps(obj: Any) -> str:
    # ensure_ascii=False: U+2028 and friends go on the wire raw, as real providers send them.
    return json.dumps(obj, ensure_ascii=_ESCAPE_NON_ASCII.get(), separators=(",", ":"))


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else dumps(data)
    return f"{head}data: {payload}\n\n".encode()


_RAW_STOPS = {
    OPENAI: {
        "end_turn": "stop",
        "tool_use": "tool_calls",
        "max_output": "length",
        "refusal": "stop",
        "paused": "stop",
        "other": "unexpected_reason",
    },
    ANTHROPIC: {
        "end_turn": "end_turn",
        "tool_use": "tool_use",
        "max_output": "max_tokens",
        "refusal": "refusal",
        "paused": "pause_turn",
        "other": "unexpected_reason",
    },
    OLLAMA: {
        "end_turn": "stop",
        "tool_use": "stop",
        "max_output": "length",
        "refusal": "stop",
        "paused": "stop",
        "other": "unexpected_reason",
    },
}


def _raw_stop(turn: Turn, protocol: str) -> str:
    if turn.raw_stop:
        return turn.raw_stop
    stop = turn.stop or ("tool_use" if turn.tool_calls else "end_turn")
    return _RAW_STOPS[protocol][stop]


def render(
    turn: Turn, protocol: str, request_body: Any = None, model: str = "loopback"
) -> list[bytes]:
    """Render a turn's 200 stream as a list of events (bytes), faults of content included."""
    request_body = request_body or {}
    token = _ESCAPE_NON_ASCII.set(turn.escape_non_ascii)
    try:
        if protocol == OPENAI:
            return _render_openai(turn, request_body, model)
        if protocol == ANTHROPIC:
            return _render_anthropic(turn, model)
        return _render_ollama(turn, model)
    finally:
        _ESCAPE_NON_ASCII.reset(token)


def _cut(text: str) -> str:
    return text[: max(1, len(text) // 2)]


def _render_openai(turn: Turn, body: Mapping[str, Any], model: str) -> list[bytes]:
    cid = f"chatcmpl-loop{uuid.uuid4().hex[:12]}"
    created = int(time.time())

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": p}) for p in _pieces(turn.reasoning, turn.chunk_size)]
    field_name = "refusal" if turn.stop == "refusal" else "content"
    events += [chunk({field_name: p}) for p in _pieces(turn.text, turn.chunk_size)]
    for index, call in enumerate(turn.calls()):
        call_id = call.id or f"call_{uuid.uuid4().hex[:16]}"
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        args = call.arguments_text()
        if turn.fault == Fault.CUT_TOOL_ARGS:
            args = _cut(args)
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in _pieces(args, turn.chunk_size)
        ]
        if turn.fault == Fault.CUT_TOOL_ARGS:
            return events
    events.append(chunk({}, _raw_stop(turn, OPENAI)))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(
            _sse(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": turn.usage[0],
                        "completion_tokens": turn.usage[1],
                        "total_tokens": sum(turn.usage),
                    },
                }
            )
        )
    events.append(b"data: [DONE]\n\n")
    return events


def _render_anthropic(turn: Turn, model: str) -> list[bytes]:
    events = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_loop{uuid.uuid4().hex[:12]}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": turn.usage[0], "output_tokens": 1},
                },
            },
            "message_start",
        ),
        _sse({"type": "ping"}, "ping"),
    ]
    index = 0

    def block(start: Mapping[str, Any], deltas: list[Mapping[str, Any]], stop: bool = True) -> None:
        nonlocal index
        events.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        for delta in deltas:
            events.append(
                _sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
        if stop:
            events.append(
                _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            )
        index += 1

    if turn.reasoning:
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                {"type": "thinking_delta", "thinking": p}
                for p in _pieces(turn.reasoning, turn.chunk_size)
            ]
            + [{"type": "signature_delta", "signature": f"sig-{uuid.uuid4().hex}"}],
        )
    if turn.text:
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in _pieces(turn.text, turn.chunk_size)],
        )
    for call in turn.calls():
        args = call.arguments_text()
        cut = turn.fault == Fault.CUT_TOOL_ARGS
        if cut:
            args = _cut(args)
        block(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_{uuid.uuid4().hex[:20]}",
                "name": call.name,
                "input": {},
            },
            [
                {"type": "input_json_delta", "partial_json": p}
                for p in ["", *_pieces(args, turn.chunk_size)]
            ],
            stop=not cut,
        )
        if cut:
            return events
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": _raw_stop(turn, ANTHROPIC), "stop_sequence": None},
                "usage": {"output_tokens": turn.usage[1]},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _render_ollama(turn: Turn, model: str) -> list[bytes]:
    def line(message: Mapping[str, Any], **extra: Any) -> bytes:
        return (
            dumps(
                {
                    "model": model,
                    "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", **message},
                    "done": False,
                    **extra,
                }
            )
            + "\n"
        ).encode()

    events = [
        line({"content": "", "thinking": p}) for p in _pieces(turn.reasoning, turn.chunk_size)
    ]
    events += [line({"content": p}) for p in _pieces(turn.text, turn.chunk_size)]
    calls = turn.calls()
    if calls:
        whole = line(
            {
                "content": "",
                "tool_calls": [
                    {
                        **({"id": c.id} if c.id is not None else {}),
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments
                            if isinstance(c.arguments, Mapping)
                            else json.loads(c.arguments),
                        },
                    }
                    for c in calls
                ],
            }
        )
        if turn.fault == Fault.CUT_TOOL_ARGS:
            # Ollama sends whole calls; cut mid-JSON means the line itself ends early.
            return [*events, whole[: len(whole) // 2]]
        events.append(whole)
    done = dumps(
        {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": _raw_stop(turn, OLLAMA),
            "prompt_eval_count": turn.usage[0],
            "eval_count": turn.usage[1],
        }
    )
    return [*events, (done + "\n").encode()]


KEEPALIVE = {OPENAI: b": keep-alive\n\n", ANTHROPIC: _sse({"type": "ping"}, "ping"), OLLAMA: b""}

#: what a server that only keeps the connection alive sends (Ollama: blank lines)
PINGS = {OPENAI: b": ping\n\n", ANTHROPIC: _sse({"type": "ping"}, "ping"), OLLAMA: b"\n"}

#: the start of a line that never ends (then "x" for ever)
HUGE_LINE_STARTS = {
    OPENAI: b'data: {"choices":[{"index":0,"delta":{"content":"',
    ANTHROPIC: b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"',
    OLLAMA: b'{"model":"loopback","message":{"role":"assistant","content":"',
}

ERROR_EVENTS = {
    OPENAI: _sse(
        {
            "error": {
                "message": "The server had an error while processing your request.",
                "type": "server_error",
                "code": None,
            }
        }
    ),
    ANTHROPIC: _sse(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"
    ),
    OLLAMA: b'{"error":"an error was encountered while running the model"}\n',
}


def error_event(protocol: str, message: str = "") -> bytes:
    """The protocol's error inside a 200 stream; ``message`` replaces the recorded words."""
    if not message:
        return ERROR_EVENTS[protocol]
    if protocol == OPENAI:
        return _sse({"error": {"message": message, "type": "server_error", "code": None}})
    if protocol == ANTHROPIC:
        return _sse({"type": "error", "error": {"type": "api_error", "message": message}}, "error")
    return dumps({"error": message}).encode() + b"\n"


MALFORMED = {
    OPENAI: b'data: {"choices":[{"index":0,"delta":{"content":"cut\n\n',
    ANTHROPIC: b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"te\n\n',
    OLLAMA: b'{"model":"loopback","message":{"role":"assistant","content":"cu\n',
}

CONTENT_TYPES = {
    OPENAI: "text/event-stream",
    ANTHROPIC: "text/event-stream",
    OLLAMA: "application/x-ndjson",
}

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}

CONTEXT_ERRORS = {
    OPENAI: {
        "error": {
            "message": "This model's maximum context length is 128000 tokens. However,"
            " your messages resulted in 131072 tokens. Please reduce the "
            "length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    ANTHROPIC: {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 208310 tokens > 200000 maximum",
        },
    },
    OLLAMA: {"error": "the input length exceeds the context length"},
}


def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    message = message or f"Loopback error {status}"
    if protocol == ANTHROPIC:
        kind = ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == OLLAMA:
        return {"error": message}
    return {"error": {"message": message, "type": "loopback_error", "code": None}}

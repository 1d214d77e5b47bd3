"""A hostile MCP server for the tests: raw JSON-RPC over stdio, one message per line.

The SDK's own server side never writes a bad line, so this one is written by hand. It
answers ``initialize`` and ``tools/list`` properly; each tool answers ``tools/call`` in a
way a careless or hostile server might:

- ``big`` ``{"bytes": N, "order": "head"|"tail"}``: a valid text result of N bytes in one
  line, written 64 KB at a time; ``order`` puts the id first (as the Python SDK writes) or
  last (as the TypeScript SDK writes).
- ``endless`` ``{"order": ...}``: the start of a result whose line never ends; it writes
  until stdout closes and keeps the count of bytes written in the file ``$HOSTILE_COUNT``
  (rewritten every MB), so a test can wait for an amount without sleeping.
- ``surrogate``: a text result holding a lone surrogate as a valid JSON escape
  (``"a\\ud800b"``).
- ``garbage``: a reply with the call's id that is not JSON (cut off mid-object).
- ``not_rpc``: valid JSON with the call's id that is not a JSON-RPC message (``"jsonrpc":
  "1.0"``).
- ``not_a_result``: a JSON-RPC reply whose result is not a tool's result.
- ``stray``: a line that is not JSON and names no id (a stray ``print()``), then a proper
  answer ``"ok"``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

CHUNK = 64 * 1024
TOOLS = ("big", "endless", "surrogate", "garbage", "not_rpc", "not_a_result", "stray")

out = sys.stdout.buffer


def send(data: bytes) -> None:
    out.write(data)
    out.flush()


def reply(request_id: Any, result: Any) -> None:
    send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")


def text_result_ends(request_id: Any, order: str) -> tuple[bytes, bytes]:
    """The bytes before and after a text result's text, with the id first or last."""
    ident = json.dumps(request_id).encode()
    if order == "tail":
        return (
            b'{"result":{"content":[{"type":"text","text":"',
            b'"}],"isError":false},"jsonrpc":"2.0","id":' + ident + b"}\n",
        )
    return (
        b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"content":[{"type":"text","text":"',
        b'"}],"isError":false}}\n',
    )


def big(request_id: Any, size: int, order: str) -> None:
    head, tail = text_result_ends(request_id, order)
    out.write(head)
    block = b"x" * CHUNK
    left = size
    while left > 0:
        out.write(block[: min(left, CHUNK)])
        left -= CHUNK
    send(tail)


def endless(request_id: Any, order: str) -> None:
    head, _ = text_result_ends(request_id, order)
    count_file = os.environ.get("HOSTILE_COUNT")
    block = b"x" * CHUNK
    written = len(head)
    out.write(head)
    try:
        while True:
            out.write(block)
            out.flush()
            written += CHUNK
            if count_file and written % (1024 * 1024) < CHUNK:
                with open(count_file + ".new", "w") as f:
                    f.write(str(written))
                os.replace(count_file + ".new", count_file)
    except (BrokenPipeError, OSError):
        sys.exit(0)


def call(request_id: Any, name: str, arguments: dict[str, Any]) -> None:
    ident = json.dumps(request_id).encode()
    if name == "big":
        big(request_id, int(arguments["bytes"]), arguments.get("order", "head"))
    elif name == "endless":
        endless(request_id, arguments.get("order", "head"))
    elif name == "surrogate":
        send(
            b'{"jsonrpc":"2.0","id":'
            + ident
            + b',"result":{"content":[{"type":"text","text":"a\\ud800b"}]}}\n'
        )
    elif name == "garbage":
        send(b'{"jsonrpc":"2.0","id":' + ident + b',"result":{"content":[{"type":"te\n')
    elif name == "not_rpc":
        send(b'{"jsonrpc":"1.0","id":' + ident + b',"result":{"content":[]}}\n')
    elif name == "not_a_result":
        reply(request_id, {"content": "not a list"})
    elif name == "stray":
        send(b"Hello from a print() in the server\n")
        reply(request_id, {"content": [{"type": "text", "text": "ok"}]})
    else:
        send(
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": name}}
            ).encode()
            + b"\n"
        )


def main() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:  # a notification: nothing to answer
            continue
        if method == "initialize":
            reply(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            )
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            reply(
                request_id,
                {"tools": [{"name": t, "inputSchema": schema} for t in TOOLS]},
            )
        elif method == "tools/call":
            params = message["params"]
            call(request_id, params["name"], params.get("arguments") or {})
        else:
            reply(request_id, {})


if __name__ == "__main__":
    main()

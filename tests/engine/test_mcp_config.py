"""`load_mcp_config`: the ``mcpServers`` files other clients write, and clear refusals."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.errors import MCPConfigError
from engine.mcp import (
    MAX_LINE_BYTES,
    MCPServerConfig,
    MCPTransport,
    load_mcp_config,
    tool_names,
)

# As Claude desktop writes claude_desktop_config.json (its documentation's example).
CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-SECRET-123"},
        },
    },
    "globalShortcut": "Ctrl+Space",
}
# Cursor's ~/.cursor/mcp.json: stdio with "type", remote with url and headers.
CURSOR = {
    "mcpServers": {
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {}},
        "remote": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer SECRET-TOKEN"},
        },
    }
}
# LM Studio's mcp.json (same shape, its own extra keys kept as they are).
LM_STUDIO = {
    "mcpServers": {
        "hf-mcp-server": {
            "url": "https://huggingface.co/mcp",
            "headers": {"Authorization": "Bearer hf_SECRET"},
        },
        "memory": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-memory"],
            "disabled": False,
            "autoApprove": ["read_graph"],
            "timeout": 30,
        },
    }
}


def test_claude_desktop_config() -> None:
    fs, gh = load_mcp_config(CLAUDE_DESKTOP)
    assert fs == MCPServerConfig(
        name="filesystem",
        transport=MCPTransport.STDIO,
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"),
    )
    assert fs.timeout == 300.0 and fs.cwd is None
    assert fs.max_line_bytes == MAX_LINE_BYTES == 16 * 1024 * 1024
    assert dict(gh.env) == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-SECRET-123"}
    assert "SECRET" not in repr(gh), "an env value (a token) shows in the config's repr"


def test_cursor_config_with_a_remote_server() -> None:
    time, remote = load_mcp_config(CURSOR)
    assert time.transport is MCPTransport.STDIO and time.command == "uvx"
    assert remote.transport is MCPTransport.HTTP
    assert remote.url == "https://mcp.example.com/mcp"
    assert dict(remote.headers) == {"Authorization": "Bearer SECRET-TOKEN"}
    assert "SECRET" not in repr(remote)


def test_lm_studio_config_keeps_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(LM_STUDIO), encoding="utf-8")
    hf, memory = load_mcp_config(path)
    assert hf.transport is MCPTransport.HTTP
    assert dict(memory.extra) == {"disabled": False, "autoApprove": ["read_graph"]}
    assert memory.timeout == 30.0
    assert load_mcp_config(str(path)) == (hf, memory)
    assert load_mcp_config(json.dumps(LM_STUDIO)) == (hf, memory), "pasted JSON text"


def test_a_servers_line_limit_is_its_own() -> None:
    (config,) = load_mcp_config({"mcpServers": {"big": {"command": "x", "maxLineBytes": 65536}}})
    assert config.max_line_bytes == 65536 and "maxLineBytes" not in config.extra


def test_configs_are_frozen() -> None:
    (config, _) = load_mcp_config(CURSOR)
    with pytest.raises(AttributeError):
        config.command = "rm"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.env["X"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ("npx", "entry", "must be an object"),
        ({}, "command", "is missing"),
        ({"command": ""}, "command", "non-empty"),
        ({"command": "x", "url": "http://a"}, "url", "not both"),
        ({"command": "x", "args": "-y server"}, "args", "list of texts"),
        ({"command": "x", "args": ["-y", 3]}, "args", "list of texts"),
        ({"command": "x", "env": ["A=1"]}, "env", "object of texts"),
        ({"command": "x", "env": {"A": {"nested": 1}}}, "env", "object of texts"),
        ({"command": "x", "cwd": 5}, "cwd", "folder"),
        ({"command": "x", "timeout": 0}, "timeout", "positive"),
        ({"command": "x", "timeout": "5"}, "timeout", "positive"),
        ({"command": "x", "maxLineBytes": 1.5e6}, "maxLineBytes", "whole number of bytes"),
        ({"command": "x", "maxLineBytes": 100}, "maxLineBytes", "1024 or more"),
        ({"command": "x", "maxLineBytes": True}, "maxLineBytes", "whole number"),
        ({"url": "ftp://example.com"}, "url", "http"),
        ({"url": "https://a", "headers": "Bearer x"}, "headers", "object of texts"),
        ({"url": "https://a", "type": "sse"}, "type", "SSE"),
        ({"url": "https://a", "type": "stdio"}, "type", "command"),
        ({"command": "x", "type": "http"}, "type", "url"),
        ({"command": "x", "type": "grpc"}, "type", "stdio"),
    ],
)
def test_a_bad_entry_names_the_server_and_the_field(entry: Any, field: str, words: str) -> None:
    with pytest.raises(MCPConfigError) as caught:
        load_mcp_config({"mcpServers": {"good": {"command": "ok"}, "broken": entry}})
    error = caught.value
    assert (error.server, error.field) == ("broken", field)
    assert "'broken'" in str(error) and f'"{field}"' in str(error) and words in str(error)
    assert "load it again" in str(error)
    assert error.sentence("zh_CN") != str(error) and "broken" in error.sentence("zh_CN")


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ({"servers_typo": {}}, 'no "mcpServers"'),
        ({"mcpServers": ["a"]}, 'no "mcpServers"'),
        ("{not json", "not valid JSON"),
        ("/no/such/mcp.json", "could not be read"),
    ],
)
def test_a_bad_file_says_what_is_wrong(source: Any, words: str) -> None:
    with pytest.raises(MCPConfigError) as caught:
        load_mcp_config(source)
    assert caught.value.server is None and words in str(caught.value)


def test_vs_code_servers_key_is_read_too() -> None:
    (config,) = load_mcp_config({"servers": {"x": {"type": "http", "url": "http://127.0.0.1/m"}}})
    assert config.transport is MCPTransport.HTTP


def test_tool_names_are_valid_for_every_provider_and_deterministic() -> None:
    long = "s" * 70
    pairs = [
        ("my.server", "echo"),
        ("my_server", "echo"),
        ("my server", "echo"),
        ("天气", "查询"),
        (long, "a"),
        (long, "b"),
        ("x", "get.weather/now"),
    ]
    names = tool_names(pairs)
    assert names == tool_names(pairs)
    assert names[:3] == ["my_server__echo", "my_server__echo_2", "my_server__echo_3"]
    assert names[3] == "______"  # 天气 + "__" + 查询
    assert names[4] == "s" * 64 and names[5] == "s" * 62 + "_2"
    assert names[6] == "x__get_weather_now"
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in names)


def test_importing_the_engine_does_not_load_the_mcp_sdk() -> None:
    """Start-up stays as fast as before: the SDK (and pydantic) load with `engine.mcp` only."""
    code = "import sys, engine; print('mcp' in sys.modules, 'pydantic' in sys.modules)"
    root = str(Path(__file__).parents[2])
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert out.stdout.split() == ["False", "False"]


def test_a_config_repr_shows_no_arguments_url_env_or_headers() -> None:
    (stdio_entry, http_entry) = load_mcp_config(
        {
            "mcpServers": {
                "a": {
                    "command": "srv",
                    "args": ["--api-key", "sk-ARG-SECRET"],
                    "env": {"K": "ENV-S"},
                },
                "b": {"url": "https://h.example/mcp?key=URL-SECRET", "headers": {"X": "HDR-S"}},
            }
        }
    )
    for text in (repr(stdio_entry), repr(http_entry)):
        for secret in ("sk-ARG-SECRET", "ENV-S", "URL-SECRET", "HDR-S"):
            assert secret not in text, text

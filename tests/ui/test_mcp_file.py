"""mcp.json and its keychain-held values (`ui.settings.mcp_file`), on real files and a real keyring backend.

The keychain is `DictKeyring` (tests/ui/conftest.py), a keyring backend keeping secrets in
memory; ``no_keyring`` installs keyring's own ``fail`` backend, as on a headless machine.
"""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest

from engine.errors import MCPConfigError
from engine.mcp import MCPTransport
from ui.settings.mcp_file import (
    KEYCHAIN_KEY,
    KEYRING_SERVICE,
    MCPFile,
    MCPFileError,
    ServerEntry,
    parse_servers,
)
from ui.settings.store import SettingsError

SECRET = "ghp-mcp-0123456789abcdef-NEVER-SHOWN"
PLAIN_SECRET = "plain-in-file-0123456789-NEVER-LOGGED"
HEADER_SECRET = "Bearer hdr-0123456789-NEVER-SHOWN"

# As Claude desktop writes it, with keys Continuo does not know at both levels.
CLAUDE_DESKTOP = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"],
            "autoApprove": ["read_file"],
            "alwaysAllow": [],
        },
        "time": {"command": "uvx", "args": ["mcp-server-time"], "disabled": False},
        "remote": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"X-Team": "blue"},
            "type": "http",
            "note": {"nested": [1, 2, {"deep": True}]},
        },
    },
    "preferences": {"theme": "dark"},
}


def mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_claude_desktop_file_round_trips_with_unknown_keys(tmp_path, no_keyring) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CLAUDE_DESKTOP))
    store = MCPFile(tmp_path)
    entries = await store.load_entries()
    assert [e.name for e in entries] == ["filesystem", "time", "remote"]
    assert [e.enabled for e in entries] == [True, True, True]
    await store.save_entries(entries)
    assert json.loads(path.read_text()) == CLAUDE_DESKTOP
    assert list(json.loads(path.read_text())["mcpServers"]) == ["filesystem", "time", "remote"]
    assert mode(path) == 0o600

    entries[0].enabled = False
    await store.save_entries(entries)
    written = json.loads(path.read_text())
    expected = json.loads(json.dumps(CLAUDE_DESKTOP))
    expected["mcpServers"]["filesystem"]["disabled"] = True
    assert written == expected
    configs = await store.load_configs()
    assert [c.name for c in configs] == ["time", "remote"]
    assert [c.name for c in await store.load_configs(enabled_only=False)] == [
        "filesystem",
        "time",
        "remote",
    ]
    entries[0].enabled = True
    await store.save_entries(entries)
    assert json.loads(path.read_text()) == CLAUDE_DESKTOP


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"[1, 2]", "does not hold a JSON object"),
        (b'{"mcpServers": {"broken": {"args": ["x"]}}}', "'broken'"),
    ],
)
async def test_an_unusable_file_is_refused_and_never_written(
    tmp_path, no_keyring, content, says
) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(content)
    store = MCPFile(tmp_path)
    with pytest.raises(MCPFileError) as refused:
        await store.load_entries()
    assert str(path) in str(refused.value)
    assert says in str(refused.value)
    assert "not changed" in str(refused.value)
    with pytest.raises(MCPFileError):
        await store.save_entries([ServerEntry("time", {"command": "uvx"})])
    with pytest.raises(MCPFileError):
        await store.load_configs()
    assert path.read_bytes() == content
    # Only when the person agrees is it moved aside; then writing works again.
    moved = await store.move_aside()
    assert moved is not None and moved.read_bytes() == content
    await store.save_entries([ServerEntry("time", {"command": "uvx"})])
    assert json.loads(path.read_text()) == {"mcpServers": {"time": {"command": "uvx"}}}


async def test_a_bad_entry_names_the_server_and_the_field(tmp_path, no_keyring) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"weather": {"command": "x", "timeout": -1}}}))
    with pytest.raises(MCPFileError) as refused:
        await MCPFile(tmp_path).load_entries()
    assert "'weather'" in str(refused.value) and '"timeout"' in str(refused.value)


async def test_a_linked_file_is_written_through_and_stays_a_link(tmp_path, no_keyring) -> None:
    elsewhere = tmp_path / "dotfiles"
    elsewhere.mkdir()
    target = elsewhere / "mcp.json"
    target.write_text(json.dumps({"mcpServers": {}}))
    data = tmp_path / "data"
    data.mkdir()
    (data / "mcp.json").symlink_to(target)
    store = MCPFile(data)
    await store.save_entries([ServerEntry("time", {"command": "uvx", "args": ["mcp-server-time"]})])
    assert (data / "mcp.json").is_symlink()
    assert json.loads(target.read_text())["mcpServers"]["time"]["command"] == "uvx"
    assert mode(target) == 0o600
    assert [e.name for e in await store.load_entries()] == ["time"]


async def test_a_link_to_where_nothing_can_be_written_is_refused_and_kept(
    tmp_path, no_keyring
) -> None:
    (tmp_path / "mcp.json").symlink_to(tmp_path / "missing-folder" / "mcp.json")
    with pytest.raises(SettingsError) as refused:
        await MCPFile(tmp_path).save_entries([ServerEntry("time", {"command": "uvx"})])
    assert "link" in str(refused.value) and "missing-folder" in str(refused.value)
    assert (tmp_path / "mcp.json").is_symlink()
    assert not (tmp_path / "missing-folder").exists()


async def test_secrets_go_to_the_keychain_and_never_to_the_file_logs_or_reprs(
    tmp_path, dict_keyring, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    store = MCPFile(tmp_path)
    entries = [
        ServerEntry(
            "github",
            {
                "command": "npx",
                "env": {"GITHUB_TOKEN": "", "LOG": "1", "PLAIN": PLAIN_SECRET},
                "extra": 1,
                KEYCHAIN_KEY: ["env.GITHUB_TOKEN"],
            },
            pending={"env.GITHUB_TOKEN": SECRET},
        ),
        ServerEntry(
            "remote",
            {
                "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": ""},
                KEYCHAIN_KEY: ["headers.Authorization"],
            },
            pending={"headers.Authorization": HEADER_SECRET},
        ),
    ]
    await store.save_entries(entries)
    text = (tmp_path / "mcp.json").read_text()
    assert SECRET not in text and HEADER_SECRET not in text
    written = json.loads(text)["mcpServers"]
    assert written["github"]["env"] == {"GITHUB_TOKEN": "", "LOG": "1", "PLAIN": PLAIN_SECRET}
    assert written["github"][KEYCHAIN_KEY] == ["env.GITHUB_TOKEN"]
    assert written["remote"][KEYCHAIN_KEY] == ["headers.Authorization"]
    assert dict_keyring.secrets == {
        (KEYRING_SERVICE, "github:env:GITHUB_TOKEN"): SECRET,
        (KEYRING_SERVICE, "remote:headers:Authorization"): HEADER_SECRET,
    }

    configs = await store.load_configs()
    github, remote = configs
    assert github.env["GITHUB_TOKEN"] == SECRET and github.env["LOG"] == "1"
    assert remote.transport is MCPTransport.HTTP
    assert remote.headers["Authorization"] == HEADER_SECRET
    loaded = await store.load_entries()
    shown = repr(configs) + repr(loaded) + repr(entries) + repr(store) + caplog.text
    assert SECRET not in shown and HEADER_SECRET not in shown
    assert PLAIN_SECRET not in shown  # a value kept in the file is not logged either

    # Renamed, the value follows the server; removed, it leaves the keychain.
    loaded[0].name = "gh"
    await store.save_entries(loaded)
    assert dict_keyring.secrets[(KEYRING_SERVICE, "gh:env:GITHUB_TOKEN")] == SECRET
    assert (KEYRING_SERVICE, "github:env:GITHUB_TOKEN") not in dict_keyring.secrets
    assert (await store.load_configs())[0].env["GITHUB_TOKEN"] == SECRET
    await store.save_entries(loaded[1:])
    assert dict_keyring.secrets == {
        (KEYRING_SERVICE, "remote:headers:Authorization"): HEADER_SECRET
    }
    assert SECRET not in caplog.text and HEADER_SECRET not in caplog.text


async def test_without_a_keychain_values_stay_in_the_0600_file(tmp_path, no_keyring) -> None:
    store = MCPFile(tmp_path)
    entry = ServerEntry(
        "github",
        {"command": "npx", "env": {"GITHUB_TOKEN": ""}, KEYCHAIN_KEY: ["env.GITHUB_TOKEN"]},
        pending={"env.GITHUB_TOKEN": SECRET},
    )
    await store.save_entries([entry])
    assert not store.keychain_available
    path = tmp_path / "mcp.json"
    assert mode(path) == 0o600
    written = json.loads(path.read_text())["mcpServers"]["github"]
    assert written == {"command": "npx", "env": {"GITHUB_TOKEN": SECRET}}
    (config,) = await store.load_configs()
    assert config.env["GITHUB_TOKEN"] == SECRET


def test_import_reads_vs_code_servers_and_refuses_a_bad_entry() -> None:
    vs_code = {
        "inputs": [],
        "servers": {
            "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
            "web": {"type": "http", "url": "https://example.com/mcp", "gallery": True},
        },
    }
    entries = parse_servers(json.dumps(vs_code))
    assert [(e.name, e.data) for e in entries] == list(vs_code["servers"].items())
    with pytest.raises(MCPConfigError) as bad:
        parse_servers('{"mcpServers": {"ok": {"command": "x"}, "bad": {"url": "ftp://x"}}}')
    assert bad.value.field == "url" and "'bad'" in str(bad.value)

"""Why a stdio MCP server did not start, in words (issue 20, item 15).

A command that is not there, a file that is not a program, a working folder that does not
exist: each is said as such in English and Chinese, with the server's log, never as the OS
error's repr ("FileNotFoundError: [Errno 2] …").
"""

from __future__ import annotations

from pathlib import Path

from engine import MCPServerStartError
from engine.mcp import MCPServerConfig, MCPToolset, MCPTransport


async def _failure(tmp_path: Path, config: MCPServerConfig) -> MCPServerStartError:
    async with MCPToolset([config], log_dir=tmp_path / "logs", start_timeout=30) as toolset:
        await toolset.list_tools()
        error = toolset.failures[config.name]
    assert isinstance(error, MCPServerStartError)
    return error


def _stdio(name: str, command: str, cwd: str | None = None) -> MCPServerConfig:
    return MCPServerConfig(name=name, transport=MCPTransport.STDIO, command=command, cwd=cwd)


async def test_a_command_that_is_not_there(tmp_path: Path) -> None:
    error = await _failure(tmp_path, _stdio("thing", "/nonexistent/mcp-thing"))
    log = str(tmp_path / "logs" / "mcp-thing.log")
    assert str(error) == (
        "The MCP server 'thing' could not be started: the command /nonexistent/mcp-thing was "
        f"not found. Check its command or address (its log: {log})."
    )
    assert error.sentence("zh_CN") == (
        f"MCP 服务器 'thing' 无法启动：找不到命令 /nonexistent/mcp-thing。请检查它的命令或地址（日志：{log}）。"
    )


async def test_a_file_that_is_not_a_program(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("not a program\n")
    error = await _failure(tmp_path, _stdio("plain", str(plain)))
    assert f"the command {plain} may not be run" in str(error)
    assert f"无法运行命令 {plain}" in error.sentence("zh_CN")
    assert "Errno" not in str(error) and "PermissionError" not in str(error)


async def test_a_working_folder_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    error = await _failure(tmp_path, _stdio("there", "/bin/sh", cwd=str(missing)))
    assert f"its working folder {missing} does not exist" in str(error)
    assert f"它的工作文件夹 {missing} 不存在" in error.sentence("zh_CN")
    assert "Errno" not in str(error)

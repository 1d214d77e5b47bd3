"""MCP servers as tool hosts, on the official ``mcp`` SDK (no JSON-RPC of our own).

`load_mcp_config` reads the ``mcpServers`` format other clients use into `MCPServerConfig`s;
`MCPToolset` (an async context manager) starts servers on first need, on a thread and loop of
its own (see `engine.mcp.toolset` for why), and exposes their tools as `MCPTool`s, ordinary
engine `Tool`s named ``server__tool``. Transports: stdio (``command``) and Streamable HTTP
(``url``).
"""

from .config import (
    DEFAULT_CALL_TIMEOUT,
    MAX_LINE_BYTES,
    MCPServerConfig,
    MCPTransport,
    load_mcp_config,
)
from .process import server_environment
from .toolset import (
    MCPServerState,
    MCPTool,
    MCPToolAnnotations,
    MCPToolset,
    call_result_text,
    tool_names,
)

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "MAX_LINE_BYTES",
    "MCPServerConfig",
    "MCPServerState",
    "MCPTool",
    "MCPToolAnnotations",
    "MCPToolset",
    "MCPTransport",
    "call_result_text",
    "load_mcp_config",
    "server_environment",
    "tool_names",
]

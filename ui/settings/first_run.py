"""First run: find model servers already running on this computer and keys already set.

Owns the probe the settings dialog's "Found on this computer" page shows. It asks each
well-known local port once, all at the same time, with a short timeout, so the page is ready
in about a second however many servers are missing. A server counts as found only when it
answers its model-list route with the JSON shape that server kind uses: a stray web server on
port 8080 is not mistaken for llama.cpp.

Hosts and ports are injectable (`LocalServer`) so tests point the probe at a loopback server.
Environment keys (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``) are offered as `Discovery` with
the key wrapped in `Secret`, so a repr or log line of what was found never shows it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..common.json_store import Secret
from .store import DEFAULT_BASE_URLS, ProviderConfig, new_provider_id

__all__ = [
    "DEFAULT_SERVERS",
    "ENV_KEYS",
    "Discovery",
    "LocalServer",
    "discover",
    "env_key_providers",
    "probe_local_servers",
]

log = logging.getLogger(__name__)

# Seconds each probe may take; a server on loopback answers in milliseconds.
PROBE_TIMEOUT = 0.8


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A server kind on a well-known port: where to ask and how to read the answer."""

    name: str  # shown to the person, e.g. "Ollama"
    kind: str  # the ProviderConfig kind it is added as
    port: int
    host: str = "127.0.0.1"  # not "localhost": no IPv6-then-IPv4 fallback delay

    @property
    def base_url(self) -> str:
        root = f"http://{self.host}:{self.port}"
        return root if self.kind == "ollama" else f"{root}/v1"

    @property
    def models_url(self) -> str:
        if self.kind == "ollama":
            return f"{self.base_url}/api/tags"
        return f"{self.base_url}/models"


DEFAULT_SERVERS: tuple[LocalServer, ...] = (
    LocalServer("Ollama", "ollama", 11434),
    LocalServer("LM Studio", "openai", 1234),
    LocalServer("llama.cpp", "openai", 8080),
    LocalServer("vLLM", "openai", 8000),
)

# Environment variable → (kind, name) of the provider it is a key for.
ENV_KEYS: Mapping[str, tuple[str, str]] = {
    "OPENAI_API_KEY": ("openai", "OpenAI"),
    "ANTHROPIC_API_KEY": ("anthropic", "Anthropic"),
}

# The model to preselect for a provider found through its key.
_ENV_DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}


@dataclass(frozen=True, slots=True)
class Discovery:
    """Something found that one click can add: the provider, its key (if any), its models."""

    config: ProviderConfig
    source: str  # where it was found: "127.0.0.1:11434" or "OPENAI_API_KEY"
    api_key: Secret | None = None  # from the environment; repr shows "***"
    models: tuple[str, ...] = field(default_factory=tuple)


def _model_names(kind: str, body: Any) -> tuple[str, ...] | None:
    """Return the model names in a model-list answer, or None if it is not one."""
    if not isinstance(body, dict):
        return None
    if kind == "ollama":
        items, key = body.get("models"), "name"
    else:
        items, key = body.get("data"), "id"
    if not isinstance(items, list):
        return None
    return tuple(str(item[key]) for item in items if isinstance(item, dict) and key in item)


async def _probe(client: httpx.AsyncClient, server: LocalServer) -> Discovery | None:
    try:
        response = await client.get(server.models_url)
        if response.status_code != 200:
            return None
        models = _model_names(server.kind, response.json())
    except (httpx.HTTPError, ValueError):  # refused, timed out, or not JSON: not there
        return None
    if models is None:
        return None
    config = ProviderConfig(
        id=new_provider_id(),
        kind=server.kind,
        name=server.name,
        base_url=server.base_url,
        default_model=models[0] if models else "",
    )
    return Discovery(config=config, source=f"{server.host}:{server.port}", models=models)


async def probe_servers(
    servers: Iterable[LocalServer] = DEFAULT_SERVERS, *, probe_timeout: float = PROBE_TIMEOUT
) -> list[Discovery]:
    """Ask every server at once; return those that answered like themselves, in order."""
    servers = list(servers)
    # trust_env=False: a proxy from the environment must not see (or swallow) loopback calls.
    async with httpx.AsyncClient(timeout=probe_timeout, trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, s) for s in servers))
    result = [d for d in found if d is not None]
    log.info("Local model servers found: %s", [d.source for d in result] or "none")
    return result


async def probe_local_servers(
    servers: Iterable[LocalServer] = DEFAULT_SERVERS, *, probe_timeout: float = PROBE_TIMEOUT
) -> list[ProviderConfig]:
    """Return a provider for each local server that answered (Ollama, LM Studio, ...)."""
    return [d.config for d in await probe_servers(servers, probe_timeout=probe_timeout)]


def env_key_providers(environ: Mapping[str, str] | None = None) -> list[Discovery]:
    """Return a provider for each API key set in the environment (OPENAI_API_KEY, ...)."""
    environ = os.environ if environ is None else environ
    found = []
    for variable, (kind, name) in ENV_KEYS.items():
        key = environ.get(variable, "").strip()
        if not key:
            continue
        config = ProviderConfig(
            id=new_provider_id(),
            kind=kind,
            name=name,
            base_url=DEFAULT_BASE_URLS[kind],
            default_model=_ENV_DEFAULT_MODELS[kind],
        )
        found.append(Discovery(config=config, source=variable, api_key=Secret(key)))
    return found


async def discover(
    servers: Sequence[LocalServer] = DEFAULT_SERVERS,
    *,
    environ: Mapping[str, str] | None = None,
    probe_timeout: float = PROBE_TIMEOUT,
) -> list[Discovery]:
    """Return everything the first-run page can offer: local servers, then env keys."""
    return [*await probe_servers(servers, probe_timeout=probe_timeout), *env_key_providers(environ)]

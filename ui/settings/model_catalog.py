"""The model catalog: which models the configured providers offer, which one a conversation
uses, and the built provider adapters (one per provider and model, reused, closed together).

There is one way to build an adapter: the catalog's ``build`` function. The app's is
`threaded_builder` (the settings store builds it in a worker thread); tests pass their own.
Listing and reloading take one lock: a reload racing the listing at start built a second
adapter for the same provider (the first was dropped with its connection open) and the older
list could land last.

A running request holds its adapter (`hold` ... `release`). Saving Settings drops every
adapter (`close_adapters`), but one a request still holds is only retired: it is closed when
the last request holding it ends, not under it (that cut a streaming answer off).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..common.errors import NoProviderError

__all__ = ["ModelCatalog", "ModelChoice", "ModelFactory", "threaded_builder"]

log = logging.getLogger(__name__)

# Builds a model adapter for a provider config (or None: no provider) and a model id.
ModelFactory = Callable[[Any, str | None], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of the model picker."""

    provider_id: str
    model: str
    label: str


def threaded_builder(settings_store: Any) -> ModelFactory:
    """The app's build path: ``settings_store.build_model`` run in a worker thread.

    An adapter's HTTP client loads the CA certificates (about 50-130 ms of OpenSSL work that
    releases the GIL) and imports httpcore's connection code on first use; on the event loop
    that froze the window just as an answer began to stream. The key lookup runs in that
    thread's own loop.
    """

    def built(config: Any, model: str | None) -> Any:
        adapter = asyncio.run(settings_store.build_model(config, model))
        # anyio loads its asyncio backend on the first request (about 40 ms); load it here.
        with contextlib.suppress(ImportError):
            importlib.import_module("anyio._backends._asyncio")
        return adapter

    async def build(config: Any, model: str | None) -> Any:
        if config is None:
            raise NoProviderError()
        return await asyncio.to_thread(built, config, model)

    return build


class ModelCatalog:
    """Choices for the picker, the current choice, and the adapters built so far."""

    def __init__(
        self,
        build: ModelFactory | None,
        announce: Callable[[list[ModelChoice], ModelChoice | None], None],
    ) -> None:
        self._build = build
        self._announce = announce
        self.settings: Any = None
        self.choices: list[ModelChoice] = []
        # the shown conversation's model (its own, else the default): what the picker shows
        self.choice: ModelChoice | None = None
        # picked while no conversation was shown: the next new conversation's, once
        self.unsaved: ModelChoice | None = None
        self._adapters: dict[tuple[str, str | None], Any] = {}
        # id(adapter) → how many running requests hold it
        self._holds: dict[int, int] = {}
        # adapters dropped while held, closed when the last hold is released (by id)
        self._retired: dict[int, Any] = {}
        self.lock = asyncio.Lock()

    def providers(self) -> list[Any]:
        return list(getattr(self.settings, "providers", []) or [])

    async def close_adapters(self, *, held_too: bool = False) -> None:
        """Forget every built adapter and close it (its HTTP connections with it); one a
        running request holds is closed when that request releases it (or now: ``held_too``,
        at the window's close)."""
        adapters, self._adapters = self._adapters, {}
        for adapter in adapters.values():
            if self._holds.get(id(adapter)) and not held_too:
                self._retired[id(adapter)] = adapter
            else:
                await _close(adapter)
        if held_too:
            retired, self._retired = list(self._retired.values()), {}
            for adapter in retired:
                await _close(adapter)

    async def hold(self, metadata: dict[str, Any]) -> Any:
        """The adapter a request of a conversation with ``metadata`` uses, held until
        `release` (a settings reload does not close it meanwhile)."""
        adapter = await self.model_for(metadata)
        self._holds[id(adapter)] = self._holds.get(id(adapter), 0) + 1
        return adapter

    async def release(self, adapter: Any) -> None:
        """A request ended: close its adapter if it was retired and nobody holds it now."""
        key = id(adapter)
        left = self._holds.get(key, 0) - 1
        if left > 0:
            self._holds[key] = left
            return
        self._holds.pop(key, None)
        retired = self._retired.pop(key, None)
        if retired is not None:
            await _close(retired)

    async def adapter(self, config: Any, model: str | None) -> Any:
        """The adapter for ``config`` and ``model``, built once."""
        key = (getattr(config, "id", ""), model)
        adapter = self._adapters.get(key)
        if adapter is None:
            if self._build is None:
                raise NoProviderError()
            adapter = await self._build(config, model)
            self._adapters[key] = adapter
        return adapter

    async def list_models(self, metadata: dict[str, Any]) -> None:
        """Ask every provider for its models (concurrently); choose for ``metadata``.

        The caller holds `lock`.
        """
        providers = self.providers()

        async def listed(config: Any) -> list[str]:
            names = [config.default_model] if config.default_model else []
            try:
                adapter = await self.adapter(config, None)
                async with asyncio.timeout(10):
                    found = await adapter.list_models()
            except Exception as exc:  # offline or refused: the configured default still shows
                log.info("could not list models of %s: %s", config.name, type(exc).__name__)
                return names
            for name in found:
                name = str(getattr(name, "id", name))
                if name not in names:
                    names.append(name)
            return names

        results = await asyncio.gather(*(listed(p) for p in providers))
        choices: list[ModelChoice] = []
        for config, names in zip(providers, results, strict=True):
            for name in names:
                choices.append(ModelChoice(config.id, name, f"{name} — {config.name}"))
        self.choices = choices
        self.select_for(metadata)

    def select_for(self, metadata: dict[str, Any]) -> None:
        """Choose the conversation's model (else, with no conversation shown, the one picked
        meanwhile, else the default) and announce the picker's entries.

        Another conversation's choice is never the fallback: a model picked with "Regenerate
        with" in one conversation stays in it (new chats took it).
        """
        choice = None
        provider_id, model = metadata.get("provider_id"), metadata.get("model")
        for candidate in self.choices:
            if candidate.provider_id == provider_id and candidate.model == model:
                choice = candidate
                break
        if choice is None and not metadata and self.unsaved in self.choices:
            choice = self.unsaved
        if choice is None:
            choice = self.default_choice()
        self.choice = choice
        self._announce(list(self.choices), choice)

    def default_choice(self) -> ModelChoice | None:
        """The model Settings names for new conversations: the default provider's default
        model (else its first listed, else the first listed); None when none is listed."""
        default = self.settings.default_provider() if self.settings is not None else None
        same = [c for c in self.choices if default is not None and c.provider_id == default.id]
        wanted = [c for c in same if c.model == getattr(default, "default_model", None)]
        found = wanted or same or self.choices
        return found[0] if found else None

    def metadata_for_new(self) -> dict[str, Any]:
        """A new conversation starts with the model picked while none was shown, else the
        default one of Settings ("Use for new conversations"), never another conversation's.
        Before the models are listed, the default provider and its configured model."""
        choice, self.unsaved = self.unsaved or self.default_choice(), None
        if choice is not None:
            return {"provider_id": choice.provider_id, "model": choice.model}
        default = self.settings.default_provider() if self.settings is not None else None
        if default is None:
            return {}
        if not default.default_model:  # "ask the server": the model is chosen when listed
            return {"provider_id": default.id}
        return {"provider_id": default.id, "model": default.default_model}

    async def model_for(self, metadata: dict[str, Any]) -> Any:
        """The adapter a conversation with ``metadata`` uses now."""
        provider_id = metadata.get("provider_id")
        model = metadata.get("model")
        if self.choice is not None and not provider_id:
            provider_id, model = self.choice.provider_id, self.choice.model
        config = None
        if self.settings is not None:
            config = self.settings.provider(provider_id) or self.settings.default_provider()
            if config is not None and config.id != provider_id:
                model = None
        if config is None and self._build is None:
            raise NoProviderError()
        return await self.adapter(config, model or getattr(config, "default_model", None) or None)


async def _close(adapter: Any) -> None:
    close = getattr(adapter, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()

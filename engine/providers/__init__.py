"""Model adapters for real providers, over httpx: one module per wire protocol.

- `OpenAIChatModel`: OpenAI Chat Completions (SSE), and every compatible server.
- `AnthropicModel`: Anthropic Messages (SSE).
- `OllamaModel`: Ollama ``/api/chat`` (newline-delimited JSON).

Each is a model in the engine's sense (``stream(request)`` yields `ModelEvent`s), retries
transient failures only before any output, and raises the `ProviderError` family with
messages for a person and never a credential. `ModelInfo` is what ``list_models()`` returns.
"""

from .anthropic import AnthropicModel
from .base import ModelInfo
from .ollama import OllamaModel
from .openai import OpenAIChatModel

__all__ = ["AnthropicModel", "ModelInfo", "OllamaModel", "OpenAIChatModel"]

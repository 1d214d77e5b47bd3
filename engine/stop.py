"""Why a model step ended: `StopReason` and `StopInfo`.

Every adapter maps its provider's stop value onto a `StopReason` and keeps the raw value, so
nothing is lost in translation and the resume rules (see `engine.resume`) can read one field.
An assistant message carries a `StopInfo` only when its step did not end normally.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .text import clean, clean_data

__all__ = ["StopInfo", "StopReason"]


class StopReason(StrEnum):
    """The normalised reason a model step ended."""

    END_TURN = "end_turn"  #: the model finished its answer
    TOOL_USE = "tool_use"  #: the model asked for tools
    MAX_OUTPUT = "max_output"  #: the output token limit cut the answer
    CONTEXT_FULL = "context_full"  #: the context window is full
    REFUSAL = "refusal"  #: the model declined
    PAUSED = "paused"  #: the provider handed control back mid-turn (Anthropic pause_turn)
    INTERRUPTED = "interrupted"  #: a fault or Stop cut the stream; the text is partial
    OTHER = "other"  #: a value this runtime does not know


_NORMAL = frozenset({StopReason.END_TURN, StopReason.TOOL_USE})

#: `StopInfo.raw` of a partial response a cancel cut (Stop, a closing window), as the agent
#: writes it (`StopInfo.cancelled` reads it)
CANCELLED_RAW = "cancelled"


@dataclass(frozen=True, slots=True)
class StopInfo:
    """How a step stopped.

    Attributes:
        reason: the normalised reason.
        raw: the provider's own value (``"length"``, ``"max_tokens"``) or, for a partial
            response, a short code: ``network_error``, ``provider_error`` or ``cancelled``.
        message: one sentence for a person, when there is something to say.
        details: extra facts, e.g. ``withheld_tool_calls`` (names of calls that were dropped
            because a step with an abnormal stop cannot be trusted whole).
    """

    reason: StopReason
    raw: str | None = None
    message: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.reason, StopReason):
            try:
                object.__setattr__(self, "reason", StopReason(self.reason))
            except ValueError:
                object.__setattr__(self, "raw", self.raw or str(self.reason))
                object.__setattr__(self, "reason", StopReason.OTHER)
        object.__setattr__(self, "details", clean_data(dict(self.details)))
        if self.message is not None:
            object.__setattr__(self, "message", clean(self.message))
        if self.raw is not None:
            object.__setattr__(self, "raw", clean(self.raw))

    @property
    def ok(self) -> bool:
        """True when the step ended normally (an answer, or a request for tools)."""
        return self.reason in _NORMAL

    @property
    def cancelled(self) -> bool:
        """True when a cancel (Stop, a closing window) cut the step, not a fault."""
        return self.reason is StopReason.INTERRUPTED and self.raw == CANCELLED_RAW

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        data: dict[str, Any] = {"reason": self.reason.value}
        if self.raw is not None:
            data["raw"] = self.raw
        if self.message is not None:
            data["message"] = self.message
        if self.details:
            data["details"] = dict(self.details)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StopInfo:
        """Build from the JSON form written by `to_dict`."""
        return cls(
            reason=data["reason"],
            raw=data.get("raw"),
            message=data.get("message"),
            details=data.get("details") or {},
        )

    @classmethod
    def coerce(cls, value: StopInfo | StopReason | str | None) -> StopInfo | None:
        """Accept a `StopInfo`, a `StopReason` (or its value), or None."""
        if value is None or isinstance(value, StopInfo):
            return value
        return cls(reason=value)  # type: ignore[arg-type]

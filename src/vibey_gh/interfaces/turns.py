"""One turn as a runner answered it: the raw result metrics and fidelity are computed from."""

from __future__ import annotations

from typing import Any

import msgspec

from .token_gaps import Gaps, checked_gaps

# Done/finish reasons that make a turn "served" (design §5).
SERVED_REASONS = frozenset({"stop", "length", "tool_calls"})

# The failure reason every adapter uses for a prompt longer than the slot's window.
REFUSED_OVER_WINDOW = "refused: over window"


class ToolCall(msgspec.Struct, frozen=True):
    name: str
    arguments: dict[str, Any]


class TurnResult(msgspec.Struct, frozen=True):
    """What one request gave back, as raw as possible; metrics are computed from it later.

    Fields:
      status: HTTP status, or None when no response arrived (timeout, connection refused).
      finish_reason: done_reason (Ollama) / finish_reason (OpenAI), None when absent.
      prompt_tokens / output_tokens: as the runner counted them, None when not reported.
      text: the answer text ("" for a pure tool call or a failure).
      tool_calls: the tool calls, in order.
      started / ended: monotonic seconds around the request.
      cached_tokens: prompt tokens the runner took from its prompt cache (a prefix it already
        held), None when it does not say.
      error: why the turn failed (None when served), e.g. "refused: over window",
        "http 500: error parsing tool call", "no done reason", "timeout after 600s".
      streamed: the answer came as a stream and was reassembled; the three fields below are
        recorded only then (a turn recorded unstreamed has no token timing).
      first_token / last_token: monotonic seconds when the first and the last chunk carrying
        answer text or a tool call arrived (None when none did).
      token_chunks: how many chunks carried answer text or a tool call.
      token_gaps: the gaps between those chunks, counted in buckets (`token_gaps`); empty for
        turns recorded before the gaps were kept.
    """

    status: int | None
    finish_reason: str | None
    prompt_tokens: int | None
    output_tokens: int | None
    text: str
    tool_calls: tuple[ToolCall, ...]
    started: float
    ended: float
    error: str | None = None
    cached_tokens: int | None = None
    streamed: bool = False
    first_token: float | None = None
    last_token: float | None = None
    token_chunks: int = 0
    token_gaps: Gaps = ()

    @property
    def served(self) -> bool:
        return self.status == 200 and self.finish_reason in SERVED_REASONS and self.error is None

    @property
    def latency_s(self) -> float:
        return self.ended - self.started

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "text": self.text,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "started": self.started,
            "ended": self.ended,
            "error": self.error,
            # left out when unknown: results recorded before the field keep their bytes
            **({"cached_tokens": self.cached_tokens} if self.cached_tokens is not None else {}),
        }
        if self.streamed:
            data["streamed"] = True
            data["first_token"] = self.first_token
            data["last_token"] = self.last_token
            data["token_chunks"] = self.token_chunks
            if self.token_gaps:
                data["token_gaps"] = [list(pair) for pair in self.token_gaps]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnResult:
        return cls(
            status=data.get("status"),
            finish_reason=data.get("finish_reason"),
            prompt_tokens=data.get("prompt_tokens"),
            output_tokens=data.get("output_tokens"),
            text=data.get("text") or "",
            tool_calls=tuple(
                ToolCall(str(c["name"]), dict(c.get("arguments") or {}))
                for c in data.get("tool_calls") or []
            ),
            started=float(data["started"]),
            cached_tokens=data.get("cached_tokens"),
            ended=float(data["ended"]),
            error=data.get("error"),
            streamed=bool(data.get("streamed", False)),
            first_token=_optional_float(data.get("first_token")),
            last_token=_optional_float(data.get("last_token")),
            token_chunks=int(data.get("token_chunks") or 0),
            token_gaps=checked_gaps(data.get("token_gaps") or []),
        )


def _optional_float(value: float | str | None) -> float | None:
    return None if value is None else float(value)

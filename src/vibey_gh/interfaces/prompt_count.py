"""How deep a prompt is by a runner's own count: its chat template, then its tokenizer.

The corpus estimates depth from characters; a runner counts tokens, and how many characters a
token holds depends on the text (about three for English prose, about four for source code with
SmolLM2's tokenizer). A corpus that must reach the window by the runner's count (`slots corpus
--fill-window`) asks a `PromptCounter`; where no runner can count, it keeps the estimate.
"""

from __future__ import annotations

from typing import Any, Protocol


class PromptCounter(Protocol):
    """counted_by: what counts, as the corpus records it (the runner kind and its model)."""

    @property
    def counted_by(self) -> str: ...

    def count(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """The prompt tokens the runner reads for this request."""
        ...

"""The simulated runner's prompt cache: what each slot still holds of the prompt it served last.

llama-server keeps each slot's last prompt in its KV cache, gives a new request to the idle slot
whose cached prompt shares the most of it, and reuses the shared prefix: only the rest is read,
and the reused tokens are reported (`usage.prompt_tokens_details.cached_tokens` and
`timings.cache_n`). This model does the same on the prompt's text: a prompt is its tool list
then its messages as compact JSON (as a chat template puts the tools first), and the tokens
reused are the shared characters at the runner's four characters a token — never the whole
prompt, as llama-server always reads its last token again. A slot is chosen for what it holds
as llama-server chooses one (`SIMILARITY`).

The reuse is reported, not charged: a turn's service time stays the capacity model's
(`simulated_model.work_seconds`), so the curve a simulated sweep should find depends only on
the model's parameters, whatever the corpus shares.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from .simulated_model import CHARS_PER_TOKEN

# llama-server's `--slot-prompt-similarity` default: a slot is chosen for what it holds only when
# that is at least this share of the new prompt (every chat prompt shares its first few tokens).
SIMILARITY = 0.1


def prompt_text(messages: list[Any], tools: list[Any] | None) -> str:
    text = json.dumps(tools, separators=(",", ":")) if tools else ""
    return text + json.dumps(messages, separators=(",", ":"))


def shared_prefix_chars(first: str, second: str) -> int:
    """How many leading characters the two texts share (a binary search over slice
    comparisons, which run in C: a deep prompt is a quarter of a megabyte)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class SlotPromptCache:
    """Each slot's last prompt; shared by the server's request threads."""

    def __init__(self, slots: int) -> None:
        self._held = [""] * slots
        self._lock = threading.Lock()

    def choose(self, free: Sequence[int], text: str) -> int:
        """The free slot whose cached prompt shares the most of `text`, if that is at least
        `SIMILARITY` of it; else the first free one (the longest idle)."""
        with self._lock:
            shared = [(shared_prefix_chars(self._held[slot], text), slot) for slot in free]
        best = max(shared, key=lambda pair: pair[0])
        return best[1] if best[0] >= SIMILARITY * len(text) and best[0] > 0 else free[0]

    def serve(self, slot: int, text: str, prompt_tokens: int) -> int:
        """The prompt tokens `slot` reuses for `text`, which it then holds."""
        with self._lock:
            shared = shared_prefix_chars(self._held[slot], text)
            self._held[slot] = text
        return min(shared // CHARS_PER_TOKEN, max(0, prompt_tokens - 1))

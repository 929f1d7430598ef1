"""The simulated runner's prompt cache: what each slot still holds of the prompt it served last.

llama-server keeps each slot's last prompt in its KV cache, gives a new request to the idle slot
whose cached prompt shares the most of it, and reuses the shared prefix: only the rest is read,
and the reused tokens are reported (`usage.prompt_tokens_details.cached_tokens` and
`timings.cache_n`). This model does the same on the prompt's text: a prompt is its tool list
then its messages as compact JSON (as a chat template puts the tools first), and the tokens
reused are the shared characters at the runner's four characters a token — never the whole
prompt, as llama-server always reads its last token again. A slot is chosen for what it holds
as llama-server chooses one (`SIMILARITY`).

Beside what its slots hold, the runner may keep earlier prompts for any slot, most recently
used first, up to `cache_tokens` tokens in all, as llama-server's `--cache-ram` prompt cache
keeps the prompt a slot lets go of and restores it into whichever slot needs it (0: none). A
prompt is then reused from whichever of the slot's own and the kept prompts shares most of it:
what serves a conversation sent twice from what its first sending left, at any N, as repeated
passes over a corpus would be served without their pass marks.

What the reuse costs is the capacity model's (`model.work_seconds`, `cache_speedup`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from .model import CHARS_PER_TOKEN

# llama-server's `--slot-prompt-similarity` default: a slot is chosen for what it holds only when
# that is at least this share of the new prompt (every chat prompt shares its first few tokens).
SIMILARITY = 0.1


def prompt_text(messages: Sequence[object], tools: Sequence[object] | None) -> str:
    text = json.dumps(tools, separators=(",", ":")) if tools else ""
    return text + json.dumps(messages, separators=(",", ":"))


def shared_prefix_chars(first: str, second: str) -> int:
    """How many leading characters the two texts share: a galloping search, then a binary one,
    over slice comparisons (which run in C), so the cost follows what is shared, not the texts'
    length (a deep prompt is a quarter of a megabyte; a slot may keep many)."""
    limit = min(len(first), len(second))
    low, high = 0, min(limit, 64)
    while high < limit and first[:high] == second[:high]:
        low, high = high, min(limit, high * 2)
    if first[:high] == second[:high]:
        return high
    high -= 1
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


class SlotPromptCache:
    """Each slot's prompt, and the earlier prompts the runner keeps for any slot; shared by
    the server's request threads."""

    def __init__(self, slots: int, keep_tokens: int = 0) -> None:
        self._held = [""] * slots
        self._kept: list[str] = []
        self._keep_tokens = keep_tokens
        self._lock = threading.Lock()

    def choose(self, free: Sequence[int], text: str) -> int:
        """The free slot whose prompt shares the most of `text`, if that is at least
        `SIMILARITY` of it; else the first free one (the longest idle)."""
        with self._lock:
            shared = [(shared_prefix_chars(self._held[slot], text), slot) for slot in free]
        best = max(shared, key=lambda pair: pair[0])
        return best[1] if best[0] >= SIMILARITY * len(text) and best[0] > 0 else free[0]

    def _best_kept(self, text: str, better_than: int) -> int:
        """The most of `text` a kept prompt shares, where more than `better_than`."""
        best = better_than
        for kept in self._kept:
            # one that cannot beat the best so far is passed over by one comparison in C
            if kept.startswith(text[: best + 1]):
                best = max(best, shared_prefix_chars(kept, text))
        return best

    def serve(self, slot: int, text: str, prompt_tokens: int) -> int:
        """The prompt tokens `slot` reuses for `text` (from its own prompt or a kept one),
        which it then holds; the prompt it let go of is kept, the most recently used first,
        while the kept ones fit in `keep_tokens` (one that `text` extends is part of it)."""
        with self._lock:
            held = self._held[slot]
            shared = shared_prefix_chars(held, text)
            if self._keep_tokens:
                shared = self._best_kept(text, shared)
                kept: list[str] = []
                room = self._keep_tokens
                for earlier in [held, *self._kept]:
                    size = len(earlier) // CHARS_PER_TOKEN
                    if not earlier or size > room or text.startswith(earlier) or earlier in kept:
                        continue
                    kept.append(earlier)
                    room -= size
                self._kept = kept
            self._held[slot] = text
        return min(shared // CHARS_PER_TOKEN, max(0, prompt_tokens - 1))

"""The simulated runner's prompt cache: what each slot still holds of the prompt it served last.

llama-server keeps each slot's last prompt in its KV cache, gives a new request to the idle slot
whose cached prompt shares the most of it, and reuses the shared prefix: only the rest is read,
and the reused tokens are reported (`usage.prompt_tokens_details.cached_tokens` and
`timings.cache_n`). This model does the same on the prompt's text: a prompt is its tool list
then its messages as compact JSON (as a chat template puts the tools first), and the tokens
reused are the shared characters at the runner's four characters a token — never the whole
prompt, as llama-server always reads its last token again. A slot is chosen for what it holds
as llama-server chooses one (`SIMILARITY`).

Beside the prompt it holds, a slot may keep earlier prompts, most recently used first, up to
`cache_tokens` tokens in all, as llama-server's `--cache-ram` prompt cache keeps them (0: none):
a prompt is then reused from whichever the slot keeps shares most of it. That is what serves a
conversation sent twice from the cache the first time left, as repeated passes over a corpus
would be served without their pass marker.

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
    """Each slot's prompts: the one it holds first, then the earlier ones it keeps; shared by
    the server's request threads."""

    def __init__(self, slots: int, keep_tokens: int = 0) -> None:
        self._held: list[list[str]] = [[] for _ in range(slots)]
        self._keep_tokens = keep_tokens
        self._lock = threading.Lock()

    def _best(self, slot: int, text: str) -> int:
        """The most of `text` any prompt the slot keeps shares (under the lock)."""
        best = 0
        for held in self._held[slot]:
            # one that cannot beat the best so far is passed over by one comparison in C
            if best and not held.startswith(text[: best + 1]):
                continue
            best = max(best, shared_prefix_chars(held, text))
        return best

    def choose(self, free: Sequence[int], text: str) -> int:
        """The free slot whose cached prompts share the most of `text`, if that is at least
        `SIMILARITY` of it; else the first free one (the longest idle)."""
        with self._lock:
            shared = [(self._best(slot, text), slot) for slot in free]
        best = max(shared, key=lambda pair: pair[0])
        return best[1] if best[0] >= SIMILARITY * len(text) and best[0] > 0 else free[0]

    def serve(self, slot: int, text: str, prompt_tokens: int) -> int:
        """The prompt tokens `slot` reuses for `text`, which it then holds; of the earlier
        prompts, those that fit in `keep_tokens` stay, the most recently used first (one that
        `text` extends is part of it now)."""
        with self._lock:
            shared = self._best(slot, text)
            kept, room = [text], self._keep_tokens
            for held in self._held[slot]:
                if held == text or text.startswith(held) or _tokens(held) > room:
                    continue
                kept.append(held)
                room -= _tokens(held)
            self._held[slot] = kept
        return min(shared // CHARS_PER_TOKEN, max(0, prompt_tokens - 1))

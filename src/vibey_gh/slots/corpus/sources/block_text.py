"""Deterministic stand-in text for a trace's KV blocks.

A recorded trace says which prompt blocks two requests share (equal block ids) but not what
they said. Each block id gets its own text, drawn from sha256 of (scope, block id) — the same
block gives the same text in every request and on every machine, and two scopes (two traces
whose ids are local to them) share nothing. The text is a run of common two-letter words,
each with its space: three characters a token, the project's own estimate, so a block of k
tokens is 3k characters and a tokenizer counts about k for it. Lengths are whole words, so a
block boundary never splits a word into a rarer token.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

# Two-letter words, each a single token to a byte-pair tokenizer once a space precedes it: a
# block of 3k characters is k tokens, exactly the estimate, so a trace's depth carries over.
# fmt: off
WORDS = (
    "of", "to", "in", "it", "is", "be", "as", "at", "so", "we", "he", "by", "or", "on", "do", "if",
    "me", "my", "up", "an", "go", "no", "us", "am", "oh", "hi", "ok", "id", "re", "ad", "ex", "ha",
)
# fmt: on
UNIT = 3  # one word with its space


def block_text(scope: str, block_id: int | str, tokens: int) -> str:
    """The block's first `tokens` words: 3 × `tokens` characters (a prefix of one endless
    text per block, so a block cut shorter in one place is the start of it in another)."""
    if tokens <= 0:
        return ""
    return _stream(scope, block_id, -(-tokens // _STEP) * _STEP)[: tokens * UNIT]


_STEP = 64


@lru_cache(maxsize=16384)
def _stream(scope: str, block_id: int | str, words: int) -> str:
    parts: list[str] = []
    counter = 0
    while len(parts) < words:
        digest = hashlib.sha256(f"{scope}\0{block_id}\0{counter}".encode()).digest()
        parts.extend(" " + WORDS[byte % len(WORDS)] for byte in digest)
        counter += 1
    return "".join(parts[:words])

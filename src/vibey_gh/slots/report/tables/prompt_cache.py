"""A step's prompt cache as people read it: the share of prompt tokens the runner took from its
cache, the first pass over the corpus beside the repeats (`judging.truth.prefix_cache`)."""

from __future__ import annotations

from ...judging.truth.prefix_cache import NOT_REPORTED, CacheShares


def cache_cell(shares: CacheShares) -> str:
    """'41% (pass 1 40%, repeats 42%)'; 'not recorded' where no turn kept the runner's count
    (Ollama reports none)."""
    if shares.share is None:
        return "not recorded" if shares.why == NOT_REPORTED else "—"
    if shares.first_pass is None or shares.repeats is None:
        return f"{shares.share:.0%}"
    return f"{shares.share:.0%} (pass 1 {shares.first_pass:.0%}, repeats {shares.repeats:.0%})"


def cache_brief(shares: CacheShares) -> str:
    return "—" if shares.share is None else f"{shares.share:.0%}"

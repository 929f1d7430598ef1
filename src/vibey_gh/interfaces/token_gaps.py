"""The gaps between a streamed answer's tokens, kept compactly.

Inter-token latency (ITL) is every gap between consecutive chunks carrying answer tokens, each
its own sample (as vLLM measures it): the stall another slot's prompt processing causes in a
stream shows as a few long gaps, which a turn's mean gap (TPOT) averages away. A turn of 768
tokens has 767 gaps; kept one by one they would make evidence grow with every token. So a turn
keeps counts in buckets that grow by 2% each: bucket 0 holds gaps under GAP_FLOOR_S (tokens that
arrived together), bucket i ≥ 1 those in [GAP_FLOOR_S·GROWTH^(i−1), GAP_FLOOR_S·GROWTH^i). A gap
is read back as its bucket's upper edge: never below it, at most 2% above. A turn's gaps take
a few dozen buckets at most, whatever its length; a step's pooled gaps, at most MAX_BUCKET.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Annotated

import msgspec
from msgspec import Meta

GAP_FLOOR_S = 1e-4
GROWTH = 1.02
# 2% buckets from 0.1 ms reach past an hour: no gap of a turn with a deadline is longer
MAX_BUCKET = 1100

# (bucket, count), counts ≥ 1, buckets ascending (checked by `ascending`, as a record is read)
Gaps = tuple[tuple[Annotated[int, Meta(ge=0, le=MAX_BUCKET)], Annotated[int, Meta(ge=1)]], ...]


def bucket_of(gap_s: float) -> int:
    if gap_s < GAP_FLOOR_S:
        return 0
    return min(MAX_BUCKET, 1 + math.floor(math.log(gap_s / GAP_FLOOR_S) / math.log(GROWTH)))


def upper_edge(bucket: int) -> float:
    """What a gap counted in `bucket` is read as: the bucket's upper edge."""
    return GAP_FLOOR_S * GROWTH**bucket


def as_gaps(counts: Mapping[int, int]) -> Gaps:
    return tuple(sorted((b, n) for b, n in counts.items() if n > 0))


def merged(all_gaps: Iterable[Gaps]) -> Gaps:
    counts: dict[int, int] = {}
    for gaps in all_gaps:
        for bucket, count in gaps:
            counts[bucket] = counts.get(bucket, 0) + count
    return as_gaps(counts)


def ascending(gaps: Gaps) -> None:
    """ValueError unless each bucket comes once, in ascending order (the declared `Gaps`
    type checks each pair; this, their order)."""
    if any(later[0] <= earlier[0] for earlier, later in zip(gaps, gaps[1:], strict=False)):
        raise ValueError("token_gaps: expected buckets in ascending order, each once")


def checked_gaps(stored: object) -> Gaps:
    """Stored gaps ([[bucket, count], …]) as declared; ValueError saying what is wrong."""
    try:
        gaps = msgspec.convert(stored, Gaps, strict=True)
    except msgspec.ValidationError as exc:
        raise ValueError(f"expected [bucket 0…{MAX_BUCKET}, count ≥ 1] pairs ({exc})") from None
    ascending(gaps)
    return gaps

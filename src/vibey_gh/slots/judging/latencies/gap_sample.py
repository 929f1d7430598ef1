"""A step's inter-token latency (ITL): every gap between its turns' token chunks, pooled.

The gaps come counted in 2% buckets (`interfaces.token_gaps`), and so they stay: a step's
pooled gaps are at most MAX_BUCKET counts however many tokens it streamed. A quantile is read
as its bucket's upper edge (never below the gap it stands for), the mean from the gaps' exact
sum (each turn's last chunk minus its first). The p95's interval is the distribution-free one
over the gaps' ranks; gaps within one turn are not independent draws, so it is narrower than
the truth where one turn's stall makes many of the long gaps — a long step holds many turns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from ....interfaces.token_gaps import Gaps, ascending, merged, upper_edge
from ..statistics.figure_fields import Amount, Count
from ..statistics.stats import normal_quantile, quantile_ranks

P95 = 0.95
# above this many gaps the binomial ranks are taken from the normal approximation: exact
# ranks cost a pass over every count, and at this size the two agree to a rank or so
EXACT_RANKS_UP_TO = 4000


def quantile_ranks_of(count: int, share: float, confidence: float) -> tuple[int | None, int | None]:
    """`stats.quantile_ranks`, from the normal approximation above EXACT_RANKS_UP_TO values."""
    if count <= EXACT_RANKS_UP_TO:
        return quantile_ranks(count, share, confidence)
    z = normal_quantile(0.5 + confidence / 2.0)
    spread = z * math.sqrt(count * share * (1.0 - share))
    low, high = math.floor(count * share - spread), math.ceil(count * share + spread) + 1
    return (low if low >= 1 else None), (high if high <= count else None)


class GapSample(msgspec.Struct, frozen=True):
    """Pooled gaps: (bucket, count) pairs, how many, and their exact sum in seconds."""

    gaps: Gaps
    count: Count
    total_s: Amount

    def __post_init__(self) -> None:
        ascending(self.gaps)
        if self.count != sum(n for _, n in self.gaps) or self.count < 1:
            raise ValueError("count: expected the count of the gaps")

    @classmethod
    def of(cls, per_turn: Sequence[Gaps], total_s: float) -> GapSample | None:
        pooled = merged(per_turn)
        count = sum(n for _, n in pooled)
        return cls(pooled, count, max(0.0, total_s)) if count else None

    @property
    def mean_s(self) -> float:
        return self.total_s / self.count

    def _at(self, rank: int | None) -> float | None:
        if rank is None or not 1 <= rank <= self.count:
            return None
        seen = 0
        for bucket, n in self.gaps:
            seen += n
            if seen >= rank:
                return upper_edge(bucket)
        return None

    def value(self, share: float = P95) -> float | None:
        return self._at(max(1, math.ceil(share * self.count)))

    def interval(self, confidence: float, share: float = P95) -> tuple[float | None, float | None]:
        low, high = quantile_ranks_of(self.count, share, confidence)
        return self._at(low), self._at(high)

"""Small statistics for intervals: no dependency beyond the standard library."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def standard_error(samples: Sequence[float]) -> float | None:
    """Standard error of the mean of `samples`; None with fewer than two."""
    if len(samples) < 2:
        return None
    mean = sum(samples) / len(samples)
    variance = sum((x - mean) ** 2 for x in samples) / (len(samples) - 1)
    return math.sqrt(variance / len(samples))


def t_quantile(probability: float, dof: int) -> float:
    """Student's t quantile, by the Cornish–Fisher expansion about the normal one.

    Within 1% of the exact value from 3 degrees of freedom on at the usual confidences; the
    batch means have 9.
    """
    if dof <= 0:
        return math.inf
    z = NormalDist().inv_cdf(probability)
    v = float(dof)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )

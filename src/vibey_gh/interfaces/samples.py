"""What the memory sampler reads once a second.

A missing reading is `None` with a reason in the result's `missing` map, never a silent zero.
"""

from __future__ import annotations

import msgspec
from msgspec import field


class GpuMemory(msgspec.Struct, frozen=True):
    index: int
    name: str
    used_bytes: int | None
    total_bytes: int | None


class MemorySample(msgspec.Struct, frozen=True):
    """One 1 Hz reading of the host.

    Fields:
      t: monotonic seconds (same clock as turn timestamps).
      wired_bytes: memory that cannot be paged out (macOS wired; Linux: total - available,
        or the cgroup's current usage when under a limit).
      used_bytes: memory in use by everything.
      total_bytes: physical memory (or the cgroup limit where lower).
      free_share: 0..1, the share the platform calls free/available.
      swap_in_bytes / swap_out_bytes: cumulative counters since boot (rates are derived).
      gpus: per-GPU memory where NVML is present.
      missing: field -> reason for every None above.
    """

    t: float
    wired_bytes: int | None
    used_bytes: int | None
    total_bytes: int | None
    free_share: float | None
    swap_in_bytes: int | None
    swap_out_bytes: int | None
    gpus: tuple[GpuMemory, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)

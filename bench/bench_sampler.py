"""How long one memory-sampler tick takes on this machine (design §9 target: <= 1 ms on Linux).

Prints figures; asserts nothing. Run: python bench/bench_sampler.py [ticks]
"""

from __future__ import annotations

import statistics
import sys
import time

from vibey_gh.platforms.device.probes import PlatformProbes


def main() -> None:
    ticks = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    probes = PlatformProbes.detect()
    sampler = probes.memory
    sampler.sample()  # first tick opens NVML and finds the cgroup files
    durations = []
    cpu_start = time.process_time()
    for _ in range(ticks):
        start = time.perf_counter()
        sampler.sample()
        durations.append(time.perf_counter() - start)
    cpu = time.process_time() - cpu_start
    durations.sort()
    micro = 1e6
    print(f"platform {probes.platform}, {ticks} ticks of {type(sampler).__name__}")
    print(f"  mean {statistics.fmean(durations) * micro:8.1f} us per tick")
    print(f"  p50  {durations[len(durations) // 2] * micro:8.1f} us")
    print(f"  p99  {durations[int(len(durations) * 0.99)] * micro:8.1f} us")
    print(f"  max  {durations[-1] * micro:8.1f} us")
    print(f"  cpu  {cpu / ticks * micro:8.1f} us per tick (process time)")
    print("  target: <= 1000 us per tick on Linux")


if __name__ == "__main__":
    main()

"""How fast, and in how much memory, a trace too big for a corpus of whole runs is refused.

Generates a trace in the kv-cache-tester format in a temporary folder — by default 12,000
requests of a conversation that grows block by block, about 88 MB (the size that once grew
`slots corpus` to 9 GB before it refused) — then runs `vibey-gh slots corpus --from-traces`
on it as a child process, --repeat times, and prints the wall time of each refusal and the
child's peak resident memory (getrusage's ru_maxrss of the children). The size is estimated
from the requests' `in` counts before the document is parsed, so the refusal should cost
about what reading the file does. A benchmark, not a test: it asserts nothing and is never run
by the test suite; the trace is generated, never committed.

    python bench/big_trace.py [--requests 12000] [--window 65536] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK_SIZE = 64
FIRST_BLOCKS = 1000  # a first request of 64k tokens, as a coding agent's opening
GROWTH = 4  # blocks a request adds to the conversation, before it is compacted
FIRST_ID = 10_000  # block ids of five digits and more, as a long recording's are


def write_trace(path: Path, requests: int) -> int:
    """A trace of `requests` requests; returns its size in bytes. Every 100 requests the
    conversation is compacted back to its opening (new block ids from there), so depths stay
    in a real agent's range while the file reaches tens of megabytes."""
    next_id = FIRST_ID
    opening = list(range(next_id, next_id + FIRST_BLOCKS))
    next_id += FIRST_BLOCKS
    blocks = list(opening)
    with path.open("w", encoding="utf-8") as out:
        out.write(f'{{"id":"big","block_size":{BLOCK_SIZE},"hash_id_scope":"local","requests":[')
        for index in range(requests):
            if index and index % 100 == 0:
                blocks = list(opening)
            blocks.extend(range(next_id, next_id + GROWTH))
            next_id += GROWTH
            request = {
                "t": float(index),
                "type": "n",
                "in": len(blocks) * BLOCK_SIZE,
                "out": 300,
                "hash_ids": blocks,
                "think_time": 1.5,
            }
            out.write(("," if index else "") + json.dumps(request, separators=(",", ":")))
        out.write("]}")
    return path.stat().st_size


def refuse(trace: Path, window: int, out: Path) -> tuple[float, int, str]:
    """(seconds, exit code, the last line it printed) of one `slots corpus` run."""
    command = [
        sys.executable, "-m", "vibey_gh.cli.main", "slots", "corpus",
        "--from-traces", str(trace), "--window", str(window), "--out", str(out),
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    said = (done.stderr or done.stdout).strip().splitlines()
    return seconds, done.returncode, said[-1] if said else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=12_000)
    parser.add_argument("--window", type=int, default=65_536)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-big-trace-") as temp:
        folder = Path(temp)
        trace = folder / "big.json"
        size = write_trace(trace, args.requests)
        print(f"trace: {args.requests:,} requests, {size / 1e6:.1f} MB")
        times = []
        for attempt in range(args.repeat):
            seconds, code, said = refuse(trace, args.window, folder / "corpus.json")
            times.append(seconds)
            print(f"  run {attempt + 1}: exit {code} in {seconds:.2f} s: {said[:160]}")
        # ru_maxrss is the largest child's peak, in KiB on Linux
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"refused in {statistics.median(times):.2f} s median "
            f"(min {min(times):.2f}, max {max(times):.2f}); "
            f"peak memory {peak_mib:.0f} MiB; corpus written: {(folder / 'corpus.json').exists()}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

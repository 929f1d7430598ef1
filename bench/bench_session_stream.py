"""Reading a large coding-agent session log: streamed, never held whole.

Writes a Codex CLI rollout of about `--megabytes` MB (default 1024) in a temporary folder: one
session whose conversation is a few dozen turns, buried in token-count and UI event records (as
a long-running session's log is), then builds the pool from it with `--from-sessions` and
prints the seconds taken, the bytes per second, and the peak of Python's own allocations
against the file's size. The conversation itself is small; what must not grow with the file
is everything else.

    python bench/bench_session_stream.py [--megabytes 1024]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from vibey_gh.slots.corpus.pool import PoolSources, build_pool


def line(kind: str, payload: dict[str, object], second: int) -> str:
    stamp = f"2026-03-02T{10 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def write_rollout(path: Path, megabytes: int) -> int:
    filler = line("event_msg", {"type": "token_count", "info": {"pad": "x" * 4000}}, 0)
    per_turn = max(1, (megabytes << 20) // len(filler) // 40)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        meta = {"id": "bench-session", "timestamp": "2026-03-02T10:00:00.000Z", "cli_version": "0"}
        out.write(line("session_meta", meta, 0))
        ask = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        out.write(line("response_item", ask, 1))
        for turn in range(40):
            call = {
                "type": "function_call",
                "name": "shell",
                "arguments": "{}",
                "call_id": f"c{turn}",
            }
            out.write(line("response_item", call, 2 + turn * 2))
            for _ in range(per_turn):
                out.write(filler)
                written += len(filler)
            result = {"type": "function_call_output", "call_id": f"c{turn}", "output": "ok"}
            out.write(line("response_item", result, 3 + turn * 2))
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rollout-2026-03-02T10-00-00-bench.jsonl"
        size = write_rollout(path, args.megabytes)
        started = time.perf_counter()
        pool = build_pool(PoolSources(from_sessions=[path]))
        seconds = time.perf_counter() - started
        # Again with every allocation traced (slower): the peak of what the reader holds.
        tracemalloc.start()
        build_pool(PoolSources(from_sessions=[path]))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"file                {size / 1e6:,.0f} MB, {pool.turn_count} turns in the pool")
    print(f"read in             {seconds:.1f} s ({size / 1e6 / seconds:,.0f} MB/s)")
    print(f"peak allocations    {peak / 1e6:.1f} MB ({peak / size:.2%} of the file)")


if __name__ == "__main__":
    main()

"""One slot against N in alternating blocks of one runner, beside one slot across restarts.

The real demo's sweep measures each N in its own minute on its own runner, so a gain compares
two minutes of the machine. This asks what that comparison costs on the embedded runner:

  interleaved   one runner started with N slots; blocks serving the same turns one at a time
                (one slot) or N at a time, in the order 1, N, N, 1 (a quad), repeated. Each
                quad's gain is the mean one-slot block time over the mean N-slot block time:
                a drift that is straight across a quad cancels.
  restarts      one-slot runners started one after another, a few one-slot blocks each: is
                one slot's level a property of the runner's start (the same runner agrees
                with itself, runners differ) or of the time (blocks wander either way)?

Every block serves the same corpus turns (shallow to middling depth, from the demo corpus),
each answer exactly --max-tokens long (`ignore_eos`, temperature 0), and each block's first
message starts with a line of its own so no block is served from a prompt cache another left.

    python bench/interleaved_blocks.py [--quads 4] [--slots 2] [--restarts 4]
"""

from __future__ import annotations

import argparse
import math
import queue
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import httpx
from bench_support import free_port

from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, build_demo_corpus
from vibey_gh.slots.corpus.turns import Turn
from vibey_gh.slots.judging.statistics.stats import t_quantile


class Runner:
    """An embedded runner with `slots` slots, stopped on leaving."""

    def __init__(self, slots: int, folder: Path) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.server = runner_for("embedded").start(
            RunnerLaunch(slots, DEMO_WINDOW, port, "default", folder / f"runner-{port}.log")
        )

    def __enter__(self) -> Runner:
        self.server.wait_ready()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.stop()


def request_body(turn: Turn, mark: str, max_tokens: int) -> dict[str, object]:
    messages = [dict(message) for message in turn.messages]
    messages[0]["content"] = f"[block {mark}]\n{messages[0].get('content', '')}"
    return {
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": 0,
        "seed": 1,
        "ignore_eos": True,
        "stream": False,
    }


def serve_block(url: str, turns: Sequence[Turn], at_once: int, max_tokens: int) -> float:
    """Seconds to serve every turn, `at_once` workers taking the next turn as each finishes."""
    mark = uuid.uuid4().hex[:12]
    waiting: queue.Queue[Turn] = queue.Queue()
    for turn in turns:
        waiting.put(turn)
    failures: list[str] = []

    def worker() -> None:
        with httpx.Client(timeout=600) as client:
            while True:
                try:
                    turn = waiting.get_nowait()
                except queue.Empty:
                    return
                reply = client.post(
                    f"{url}/v1/chat/completions", json=request_body(turn, mark, max_tokens)
                )
                if reply.status_code != 200:
                    failures.append(f"{turn.id}: HTTP {reply.status_code}")

    started = time.monotonic()
    workers = [threading.Thread(target=worker) for _ in range(at_once)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    if failures:
        raise SystemExit(f"a block failed: {failures[0]}")
    return time.monotonic() - started


def spread(values: Sequence[float]) -> float:
    """Standard deviation as a share of the mean."""
    return statistics.stdev(values) / statistics.mean(values)


def interleaved(args: argparse.Namespace, turns: Sequence[Turn], folder: Path) -> None:
    print(f"interleaved: one runner with {args.slots} slots, quads 1, N, N, 1", flush=True)
    blocks: list[tuple[int, float]] = []
    with Runner(args.slots, folder) as runner:
        serve_block(runner.url, turns, 1, args.max_tokens)  # loads the model's pages
        for _ in range(args.quads):
            for at_once in (1, args.slots, args.slots, 1):
                seconds = serve_block(runner.url, turns, at_once, args.max_tokens)
                blocks.append((at_once, seconds))
                print(f"  N={at_once}: {seconds:.2f} s", flush=True)
    one = [s for n, s in blocks if n == 1]
    many = [s for n, s in blocks if n != 1]
    gains = [
        statistics.mean(s for n, s in blocks[q : q + 4] if n == 1)
        / statistics.mean(s for n, s in blocks[q : q + 4] if n != 1)
        for q in range(0, len(blocks), 4)
    ]
    logs = [math.log(g) for g in gains]
    centre = statistics.mean(logs)
    error = statistics.stdev(logs) / math.sqrt(len(logs))
    reach = t_quantile(0.95, len(logs) - 1) * error
    print(
        f"  one-slot blocks: {spread(one):.1%} apart (sd), "
        f"first {one[0]:.2f} s, last {one[-1]:.2f} s"
    )
    print(f"  N={args.slots} blocks: {spread(many):.1%} apart (sd)")
    print(f"  gain per quad: {', '.join(f'{g:.3f}' for g in gains)}")
    print(
        f"  gain {math.exp(centre):.3f}, standard error {error:.3f} in log, 90% "
        f"{math.exp(centre - reach):.3f}–{math.exp(centre + reach):.3f} "
        f"({len(blocks)} blocks, {sum(s for _, s in blocks):.0f} s)",
        flush=True,
    )


def restarts(args: argparse.Namespace, turns: Sequence[Turn], folder: Path) -> None:
    print(f"restarts: {args.restarts} one-slot runners, 3 blocks each", flush=True)
    levels: list[list[float]] = []
    for index in range(args.restarts):
        with Runner(1, folder) as runner:
            serve_block(runner.url, turns, 1, args.max_tokens)
            times = [serve_block(runner.url, turns, 1, args.max_tokens) for _ in range(3)]
        levels.append(times)
        print(f"  runner {index}: {', '.join(f'{t:.2f}' for t in times)} s", flush=True)
    means = [statistics.mean(times) for times in levels]
    within = statistics.mean(spread(times) for times in levels)
    print(
        f"  between runners {spread(means):.1%} (sd of their means), within a runner {within:.1%}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quads", type=int, default=4)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--turns", type=int, default=7, help="corpus turns a block serves")
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args()
    if args.quads < 2 or args.slots < 2 or args.turns < 1 or args.restarts < 0:
        parser.error("needs --quads ≥ 2, --slots ≥ 2, --turns ≥ 1 and --restarts ≥ 0")
    corpus = build_demo_corpus(window=DEMO_WINDOW)
    # every other turn by depth: each depth present, the deepest few left for the sweep's cost
    by_depth = sorted(
        (turn for segment in corpus.segments for turn in segment.turns),
        key=lambda turn: turn.depth_estimate,
    )
    turns = by_depth[::2][: args.turns]
    print(f"turns: {len(turns)}, depths {', '.join(str(t.depth_estimate) for t in turns)} tokens")
    with tempfile.TemporaryDirectory(prefix="bench-interleaved-") as temp:
        interleaved(args, turns, Path(temp))
        if args.restarts:
            restarts(args, turns, Path(temp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the bench scripts share: free ports, a small corpus, a progress printer, CPU clocks.

Imported as `bench_support` by scripts run as `python bench/NAME.py` (their folder is first on
sys.path). Nothing here asserts: benchmarks print figures.
"""

from __future__ import annotations

import json
import resource
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from vibey_gh.interfaces.slots_interface import MemorySample
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.judging.records import StepRecord

MICRO_WINDOW = 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def micro_corpus(folder: Path) -> tuple[Corpus, Path]:
    """2 segments of 2 short turns (window 1024): a step takes seconds."""
    lines = []
    for index in range(4):
        messages = [
            {"role": "system", "content": "Answer in one short sentence."},
            {"role": "user", "content": f"Question {index}: what does add(2, {index}) return?"},
            {"role": "assistant", "content": f"It returns {2 + index}."},
            {"role": "user", "content": "And add(1, 1)?"},
            {"role": "assistant", "content": "It returns 2."},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You are welcome."},
        ]
        lines.append(json.dumps({"id": f"micro-{index}", "messages": messages}))
    transcripts = folder / "transcripts.jsonl"
    transcripts.write_text("\n".join(lines) + "\n")
    pool = build_pool(PoolSources(from_transcripts=[transcripts]))
    corpus = build_corpus(pool, window=MICRO_WINDOW, segments_per_stratum=2, segment_turns=2)
    path = folder / "corpus.json"
    write_corpus(corpus, path)
    return corpus, path


def runners_on(port: int) -> list[psutil.Process]:
    """Embedded runner processes started for `port`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "vibey_gh.runners.llamacpp.embedded" in cmdline and str(port) in cmdline:
            found.append(process)
    return found


class SilentProgress:
    """A calibration's progress that shows nothing; a benchmark overrides what it prints."""

    def message(self, text: str) -> None:
        return

    def sweep_started(self, plan: object) -> None:
        return

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        return

    def runner_ready(self, load_seconds: float | None) -> None:
        return

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        return

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        return


class StepPrinter:
    """A CalibrationProgress that prints one line per step to stderr."""

    def __init__(self) -> None:
        self._started = 0.0

    def message(self, text: str) -> None:
        print(f"  {text}", file=sys.stderr, flush=True)

    def sweep_started(self, plan: object) -> None:
        return

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        self._started = time.monotonic()
        print(f"  step {index}: N={slots}, {turns} turns", file=sys.stderr, flush=True)

    def runner_ready(self, load_seconds: float | None) -> None:
        return None

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        return None

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        took = time.monotonic() - self._started
        early = f", ended early: {step.ended_early}" if step.ended_early else ""
        print(f"    {verdict_label} after {took:.1f} s{early}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class CpuClock:
    """CPU seconds of this process and of its waited-for children, at one moment."""

    own: float
    children: float

    @classmethod
    def now(cls) -> CpuClock:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime)

    def since(self, start: CpuClock) -> CpuClock:
        return CpuClock(self.own - start.own, self.children - start.children)


def runner_seconds(steps: list[StepRecord] | tuple[StepRecord, ...]) -> float:
    """Wall seconds the calibration runner was up for these steps: load plus replay."""
    return sum((s.load_seconds or 0.0) + (s.ended_at - s.started_at) for s in steps)

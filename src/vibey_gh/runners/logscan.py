"""Read a runner's log for what its API does not say: slots, windows, KV cache, loads, reloads,
truncations, context shifts, device failures, out-of-memory, evictions and deaths.

One pattern table per runner family and era (reference: runners.md §1, §3, §6, §10), kept in
the kind's folder and asked of the kind (`log_patterns()`). A log is scanned with every era of
its runner at once: the eras' strings do not collide, and a calibration runner's era is whatever
binary the operator has. Embedded, llama-server and the simulated runner share the llama.cpp
table; Ollama adds its own, because every Ollama era copies the llama.cpp lines of the engine it
runs into the same log.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .log_patterns import LogEvent, LogPattern
from .registry import runner_kind as kind_named


def patterns_for(runner_kind: str) -> tuple[LogPattern, ...]:
    """The log table of the kind named `runner_kind`; BadInput naming the valid kinds."""
    return kind_named(runner_kind).log_patterns()


def scan_line(line: str, line_no: int, patterns: Iterable[LogPattern]) -> list[LogEvent]:
    """Events of one line: at most one per kind (the first pattern of that kind that matches)."""
    events: list[LogEvent] = []
    seen: set[str] = set()
    for pattern in patterns:
        if pattern.kind in seen:
            continue
        event = pattern.event(line, line_no)
        if event is not None:
            seen.add(pattern.kind)
            events.append(event)
    return events


def scan_lines(lines: Iterable[str], runner_kind: str, first_line_no: int = 1) -> list[LogEvent]:
    patterns = patterns_for(runner_kind)
    events: list[LogEvent] = []
    for offset, line in enumerate(lines):
        events.extend(scan_line(line.rstrip("\r\n"), first_line_no + offset, patterns))
    return events


class LogTail:
    """New events of a growing log since the last call; meant to be polled once a second.

    Keeps a byte offset and consumes only complete lines, so a line the runner is half-way
    through writing is read whole on the next call. A log that shrank (rotated or recreated) is
    read again from the start.
    """

    def __init__(self, path: Path, runner_kind: str) -> None:
        self.path = path
        self.runner_kind = runner_kind
        self._patterns = patterns_for(runner_kind)
        self._offset = 0
        self._line_no = 0

    def new_events(self) -> list[LogEvent]:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return []
        if size < self._offset:
            self._offset, self._line_no = 0, 0
        if size == self._offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            chunk = handle.read(size - self._offset)
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        complete = chunk[: end + 1]
        self._offset += len(complete)
        events: list[LogEvent] = []
        for raw in complete[:-1].split(b"\n"):
            self._line_no += 1
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            events.extend(scan_line(line, self._line_no, self._patterns))
        return events

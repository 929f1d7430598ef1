"""A soak's checkpoint: what was measured so far, so a Ctrl-C or a reboot resumes.

progress/soak/<fp>-n<N>-<method>.json  {schema_version, kind, key, run_dir, spans}
<run_dir>/turns.jsonl                  {"span": i, "turn": TurnRecord}  appended as turns end
<run_dir>/readings.jsonl               {"span": i, "wall": epoch s, ...ReadingSample}  per tick
<run_dir>/span-<i>/runner.log          the calibration runner's log of that span

A span is one start of the calibration runner; its times are its own monotonic seconds (a
reboot starts another clock). A span is written when it begins and again when it ends; one
cut short (a kill, a power cut) is closed on resume at its last recorded turn or tick, so
nothing measured is lost. The key (fingerprint, N, corpus, duration, how a turn is replayed)
says which soak a checkpoint belongs to; one of another key is never resumed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ...errors import EvidenceError, MalformedJson
from ...files import append_line_durably, atomic_write_json, ensure_private_dir, read_json
from ...guarded import InputProblem, iter_regular_lines, loads_json_bytes
from ...interfaces import json_fields
from ...interfaces.readings import ReadingSample, lenient_sample
from ...interfaces.schema import as_json, checked, checked_at
from ...state import StateLayout
from ..evidence.store import method_hash
from ..judging.records import TurnRecord

JOURNAL_SCHEMA = 1
JOURNAL_KIND = "vibey-gh-soak-progress"
LINE_LIMIT = 16 << 20


class Span(msgspec.Struct):
    """One stretch of a soak between starts, as its checkpoint lists it (its end moves on)."""

    index: int
    began_wall: float
    start: float | None = None  # monotonic: every worker had started (None: not yet)
    end: float | None = None  # monotonic: the last moment measured (None: still open)


@dataclass
class SoakJournal:
    path: Path
    key: dict[str, Any]
    run_dir: Path
    spans: list[Span] = field(default_factory=list)
    _pending: list[str] = field(default_factory=list)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def save(self) -> None:
        atomic_write_json(self.path, {
            "schema_version": JOURNAL_SCHEMA, "kind": JOURNAL_KIND, "key": self.key,
            "run_dir": str(self.run_dir), "spans": [as_json(s) for s in self.spans],
        })  # fmt: skip

    def begin_span(self, wall: float) -> Span:
        span = Span(len(self.spans), wall)
        self.spans.append(span)
        ensure_private_dir(self.span_dir(span.index))
        self.save()
        return span

    def span_dir(self, index: int) -> Path:
        return self.run_dir / f"span-{index:02d}"

    def add_turn(self, span: int, record: TurnRecord) -> None:
        """Kept until the next `flush_turns`: a worker never waits for an fsync."""
        line = json.dumps({"span": span, "turn": as_json(record)})
        with self._guard:
            self._pending.append(line)

    def flush_turns(self) -> None:
        with self._guard:
            lines, self._pending = self._pending, []
        if lines:
            append_line_durably(self.run_dir / "turns.jsonl", "\n".join(lines))

    def add_reading(self, span: int, wall: float, sample: ReadingSample) -> None:
        line = {"span": span, "wall": wall, **as_json(sample)}
        append_line_durably(self.run_dir / "readings.jsonl", json.dumps(line))

    def turns(self) -> dict[int, list[TurnRecord]]:
        out: dict[int, list[TurnRecord]] = {}
        for data in _lines(self.run_dir / "turns.jsonl"):
            span, turn = data.get("span"), data.get("turn")
            if isinstance(span, int) and isinstance(turn, dict):
                try:
                    out.setdefault(span, []).append(checked(turn, TurnRecord))
                except MalformedJson:
                    continue  # a line torn by a crash mid-write
        return out

    def readings(self) -> list[tuple[int, float, ReadingSample]]:
        """(span, wall time, sample) of every tick recorded."""
        out = []
        for data in _lines(self.run_dir / "readings.jsonl"):
            span, wall = data.get("span"), data.get("wall")
            if isinstance(span, int) and isinstance(wall, int | float):
                out.append((span, float(wall), lenient_sample(data)))
        return out

    def measured_s(self) -> float:
        return sum(s.end - s.start for s in self.spans if s.start is not None and s.end is not None)

    def close_open_spans(self) -> None:
        """A span cut short is closed at its last recorded turn or tick."""
        open_spans = [s for s in self.spans if s.end is None]
        if not open_spans:
            return
        last: dict[int, float] = {}
        for span, turns in self.turns().items():
            last[span] = max((t.result.ended for t in turns), default=0.0)
        for span, _wall, sample in self.readings():
            last[span] = max(last.get(span, 0.0), sample.t)
        for cut in open_spans:
            ended = last.get(cut.index)
            cut.end = ended if ended is not None and cut.start is not None else cut.start
        self.save()


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        for _number, raw, _ended in iter_regular_lines(path, line_limit=LINE_LIMIT):
            try:
                data = loads_json_bytes(raw)
            except InputProblem:
                continue  # a line torn by a crash mid-write
            if isinstance(data, dict):
                out.append(data)
    except FileNotFoundError:
        return []
    except InputProblem as problem:
        raise EvidenceError(f"soak checkpoint {path} {problem}") from None
    return out


def journal_path(layout: StateLayout, fingerprint: str, slots: int, key: Mapping[str, Any]) -> Path:
    # a folder of its own: the sweeps' checkpoints in progress/ are listed and read as such
    folder = ensure_private_dir(layout.progress / "soak")
    return folder / f"{fingerprint}-n{slots}-{method_hash(key)}.json"


def open_journal(
    layout: StateLayout,
    fingerprint: str,
    slots: int,
    key: dict[str, Any],
    now: float,
    restart: bool,
    say: Callable[[str], None],
) -> SoakJournal:
    """The soak's checkpoint to resume, or a new one (`restart`: a new one in any case)."""
    path = journal_path(layout, fingerprint, slots, key)
    if path.exists() and not restart:
        try:
            data = read_json(path, kind="soak checkpoint", schema_version=JOURNAL_SCHEMA)
            run_dir = data.get("run_dir")
            if data.get("key") == key and isinstance(run_dir, str):
                with json_fields.within("soak checkpoint"):
                    spans = checked_at(data, "spans", list[Span], [])
                journal = SoakJournal(path, key, Path(run_dir), spans)
                journal.close_open_spans()
                return journal
        except (EvidenceError, MalformedJson) as exc:
            say(f"soak checkpoint {path} unusable ({exc}); starting over")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    run_dir = ensure_private_dir(layout.runs / f"{stamp}-{fingerprint}-soak-n{slots}")
    journal = SoakJournal(path, key, run_dir)
    journal.save()
    return journal

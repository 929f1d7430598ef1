"""What a sweep records: raw per-turn results, samples and log events, step by step.

Everything here is data as measured (monotonic timestamps, responses, counters); the numbers a
verdict rests on are computed from it by `metrics.py` and `judge.py`, so an evidence file can be
re-judged later against other bounds.
"""

from __future__ import annotations

import msgspec
from msgspec import field

from ...errors import MalformedJson
from ...interfaces import json_fields
from ...interfaces.token_gaps import checked_gaps
from ...interfaces.turns import TurnResult


class TurnRecord(msgspec.Struct, frozen=True):
    """One replayed turn: which turn, which worker sent it, and what came back.

    think_s: the seconds the worker waited before sending it (its run's tools on replay).
    closes: it was the last turn of its segment or run, so that unit ended with it.
    pass_number: the pass over the corpus it was sent in (1 = the first), marked at the head of
    its conversation (`stepping.passes`); 0: not marked (evidence older than the marks).
    All three are written only when set (0 and False in evidence older than them, as they were).
    """

    turn_id: str
    segment_id: str
    worker: int
    result: TurnResult
    think_s: float = 0.0
    closes: bool = False
    pass_number: int = 0

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "turn_id": self.turn_id,
            "segment_id": self.segment_id,
            "worker": self.worker,
            "result": self.result.to_json(),
        }
        if self.think_s:
            data["think_s"] = self.think_s
        if self.closes:
            data["closes"] = True
        if self.pass_number:
            data["pass_number"] = self.pass_number
        return data

    @classmethod
    def from_json(cls, data: object) -> TurnRecord:
        return cls(
            turn_id=json_fields.text(data, "turn_id"),
            segment_id=json_fields.text(data, "segment_id"),
            worker=json_fields.integer(data, "worker"),
            result=json_fields.nested(data, "result", turn_result_from_json),
            think_s=json_fields.number(data, "think_s", 0.0),
            closes=json_fields.boolean(data, "closes", False),
            pass_number=json_fields.integer(data, "pass_number", 0),
        )


def turn_result_from_json(data: dict[str, object]) -> TurnResult:
    """TurnResult.from_json, after checking every field's type."""
    json_fields.integer(data, "status", None)
    json_fields.text(data, "finish_reason", None)
    json_fields.integer(data, "prompt_tokens", None)
    json_fields.integer(data, "output_tokens", None)
    json_fields.text(data, "text", None)
    json_fields.number(data, "started")
    json_fields.number(data, "ended")
    json_fields.text(data, "error", None)
    json_fields.integer(data, "cached_tokens", None)
    json_fields.boolean(data, "streamed", False)
    json_fields.number(data, "first_token", None)
    json_fields.number(data, "last_token", None)
    json_fields.integer(data, "token_chunks", 0)
    json_fields.each(data, "tool_calls", _check_tool_call)
    try:
        checked_gaps(data.get("token_gaps") or [])
    except ValueError as problem:
        raise MalformedJson(str(problem), ("token_gaps",)) from None
    try:
        return TurnResult.from_json(data)
    except ValueError as problem:  # the runner's timings, checked as they are read
        raise MalformedJson(str(problem), ("runner_timings",)) from None


def _check_tool_call(call: object) -> None:
    json_fields.text(call, "name")
    json_fields.mapping(call, "arguments")


# One timeline point: (t, wired_bytes, used_bytes, free_share, swap_in_bytes, swap_out_bytes,
# runner_rss_bytes, gpu_used_bytes_max_share, production_footprint_bytes, charged_gpu_share).
# Kept as lists to stay compact in evidence files. wired/used/gpu share are raw (the whole
# machine); the last two were added later (older points are shorter): production's counted
# resident memory, and the largest GPU share with production's per-process memory left out.
TIMELINE_FIELDS = (
    "t",
    "wired_bytes",
    "used_bytes",
    "free_share",
    "swap_in_bytes",
    "swap_out_bytes",
    "runner_rss_bytes",
    "gpu_used_share",
    "production_footprint_bytes",
    "charged_gpu_share",
)


class LogEventRecord(msgspec.Struct, frozen=True):
    kind: str
    text: str
    values: dict[str, object] = field(default_factory=dict)
    during_replay: bool = True

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "text": self.text,
            "values": self.values,
            "during_replay": self.during_replay,
        }

    @classmethod
    def from_json(cls, data: object) -> LogEventRecord:
        return cls(
            kind=json_fields.text(data, "kind"),
            text=json_fields.text(data, "text", ""),
            values=json_fields.mapping(data, "values"),
            during_replay=json_fields.truthy(data, "during_replay", True),
        )


class RunnerReported(msgspec.Struct, frozen=True):
    """What the calibration runner's log said at start-up about how it was set up, as opposed
    to what it was asked for. None where the log did not say (runners and versions differ).

    slots: parallel sequences. window: context tokens per slot. kv_cache_bytes: the KV cache's
    size. gpu_layers / layers: layers put on a GPU, of how many. attention_fallback: the device
    flash attention was put on when not the layers' ("CPU"), or "disabled (assigned to CPU)"
    when the runner switched it off for that reason.
    """

    slots: int | None = None
    window: int | None = None
    kv_cache_bytes: int | None = None
    gpu_layers: int | None = None
    layers: int | None = None
    attention_fallback: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "slots": self.slots,
            "window": self.window,
            "kv_cache_bytes": self.kv_cache_bytes,
            "gpu_layers": self.gpu_layers,
            "layers": self.layers,
            "attention_fallback": self.attention_fallback,
        }

    @classmethod
    def from_json(cls, data: object) -> RunnerReported:
        return cls(
            slots=json_fields.integer(data, "slots", None),
            window=json_fields.integer(data, "window", None),
            kv_cache_bytes=json_fields.integer(data, "kv_cache_bytes", None),
            gpu_layers=json_fields.integer(data, "gpu_layers", None),
            layers=json_fields.integer(data, "layers", None),
            attention_fallback=json_fields.text(data, "attention_fallback", None),
        )


class ProductionRecord(msgspec.Struct, frozen=True):
    """What the production runner did during a step (polled once a second)."""

    polls: int = 0
    busy_polls: int = 0
    unreachable_polls: int = 0
    models_seen: tuple[str, ...] = ()
    model_appeared: bool = False
    version: str | None = None

    @property
    def clean(self) -> bool:
        return self.busy_polls == 0 and not self.model_appeared

    def to_json(self) -> dict[str, object]:
        return {
            "polls": self.polls,
            "busy_polls": self.busy_polls,
            "unreachable_polls": self.unreachable_polls,
            "models_seen": list(self.models_seen),
            "model_appeared": self.model_appeared,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: object) -> ProductionRecord:
        return cls(
            polls=json_fields.integer(data, "polls", 0),
            busy_polls=json_fields.integer(data, "busy_polls", 0),
            unreachable_polls=json_fields.integer(data, "unreachable_polls", 0),
            models_seen=tuple(str(m) for m in json_fields.items(data, "models_seen")),
            model_appeared=json_fields.truthy(data, "model_appeared", False),
            version=json_fields.text(data, "version", None),
        )


class StepRecord(msgspec.Struct, frozen=True):
    """One measurement at `slots` parallel slots, as raw as it was taken.

    Fields:
      index: position in the sweep (0 = the first one-slot run).
      slots / window: the runner's configuration (window is per slot).
      attempt: 1 for the first try; discarded unclean tries increase it.
      load_seconds: how long preloading the model took (not part of the step's clock).
      turns: every request sent, in completion order.
      timeline: 1 Hz samples (see TIMELINE_FIELDS), replay window only.
      memory_budget_bytes: physical memory, or the cgroup limit where lower.
      gpu_budget_bytes: total memory per GPU index.
      log_events: what the runner's log said during the step.
      production: what the production runner did meanwhile.
      ended_early: why the step stopped before replaying the whole corpus, else None.
      runner_version: the calibration runner's own version.
      corpus_turns: how many turns a complete step replays (at least once each).
      measurement: for a steady-state step, its measurement window as recorded when it ended
        {start, end, turns, min_seconds, max_seconds, why_ended, reached_cap}; None for a
        step of the one-pass method. reached_cap (absent in older evidence): it measured
        until max_seconds, so an interval still inconclusive there stays so. Metrics
        recompute the window from the turns' timestamps; this copy is for a reader of the file.
      production_footprint_bytes: the most the production runner's process tree held of host
        memory during the step (left out of the charged figures); None when not identified.
      production_gpu_bytes: the most it held per GPU index (None where NVML could not say),
        or None without NVIDIA GPUs or an identified production.
      production_footprint: how production's footprint was identified, or why it was not.
      runner_reported: what the runner's start-up log said of its slots, window, KV cache,
        GPU layers and attention (None: not recorded, as in evidence older than this field).
      shape: the corpus's shape, "runs" or "segments" (segments in evidence older than it):
        a step of whole runs is judged on runs per hour, one of segments on turns per hour.
    """

    index: int
    slots: int
    window: int
    attempt: int
    started_at: float
    ended_at: float
    load_seconds: float | None
    turns: tuple[TurnRecord, ...]
    timeline: tuple[tuple[float | None, ...], ...]
    memory_budget_bytes: int | None
    log_events: tuple[LogEventRecord, ...] = ()
    production: ProductionRecord = field(default_factory=ProductionRecord)
    ended_early: str | None = None
    runner_version: str | None = None
    corpus_turns: int = 0
    gpu_budget_bytes: tuple[int | None, ...] = ()
    discarded_attempts: int = 0
    measurement: dict[str, object] | None = None
    production_footprint_bytes: int | None = None
    production_gpu_bytes: tuple[int | None, ...] | None = None
    production_footprint: str | None = None
    runner_reported: RunnerReported | None = None
    shape: str = "segments"

    def to_json(self) -> dict[str, object]:
        return {
            "shape": self.shape,
            "index": self.index,
            "slots": self.slots,
            "window": self.window,
            "attempt": self.attempt,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "load_seconds": self.load_seconds,
            "turns": [t.to_json() for t in self.turns],
            "timeline_fields": list(TIMELINE_FIELDS),
            "timeline": [list(point) for point in self.timeline],
            "memory_budget_bytes": self.memory_budget_bytes,
            "gpu_budget_bytes": list(self.gpu_budget_bytes),
            "log_events": [e.to_json() for e in self.log_events],
            "production": self.production.to_json(),
            "ended_early": self.ended_early,
            "runner_version": self.runner_version,
            "corpus_turns": self.corpus_turns,
            "discarded_attempts": self.discarded_attempts,
            "measurement": self.measurement,
            "production_footprint_bytes": self.production_footprint_bytes,
            "production_gpu_bytes": None
            if self.production_gpu_bytes is None
            else list(self.production_gpu_bytes),
            "production_footprint": self.production_footprint,
            "runner_reported": self.runner_reported.to_json() if self.runner_reported else None,
        }

    @classmethod
    def from_json(cls, data: object) -> StepRecord:
        """Raises MalformedJson naming the field when the data is not what this tool wrote."""
        return cls(
            index=json_fields.integer(data, "index"),
            slots=json_fields.integer(data, "slots"),
            window=json_fields.integer(data, "window"),
            attempt=json_fields.integer(data, "attempt", 1),
            started_at=json_fields.number(data, "started_at"),
            ended_at=json_fields.number(data, "ended_at"),
            load_seconds=json_fields.number(data, "load_seconds", None),
            turns=tuple(json_fields.each(data, "turns", TurnRecord.from_json)),
            timeline=tuple(json_fields.each(data, "timeline", _timeline_point)),
            memory_budget_bytes=json_fields.integer(data, "memory_budget_bytes", None),
            gpu_budget_bytes=_optional_byte_counts(data, "gpu_budget_bytes") or (),
            log_events=tuple(json_fields.each(data, "log_events", LogEventRecord.from_json)),
            production=json_fields.nested(data, "production", ProductionRecord.from_json)
            if json_fields.present(data, "production")
            else ProductionRecord(),
            ended_early=json_fields.text(data, "ended_early", None),
            runner_version=json_fields.text(data, "runner_version", None),
            corpus_turns=json_fields.integer(data, "corpus_turns", 0),
            discarded_attempts=json_fields.integer(data, "discarded_attempts", 0),
            measurement=json_fields.mapping(data, "measurement")
            if json_fields.truthy(data, "measurement", False)
            else None,
            production_footprint_bytes=json_fields.integer(
                data, "production_footprint_bytes", None
            ),
            production_gpu_bytes=_optional_byte_counts(data, "production_gpu_bytes"),
            production_footprint=json_fields.text(data, "production_footprint", None),
            runner_reported=json_fields.nested(data, "runner_reported", RunnerReported.from_json)
            if json_fields.present(data, "runner_reported")
            else None,
            shape=_shape(data),
        )


def _shape(data: object) -> str:
    shape: str = json_fields.text(data, "shape", "segments")
    if shape not in ("runs", "segments"):
        raise MalformedJson("expected runs or segments", ("shape",))
    return shape


def _optional_byte_counts(data: object, key: str) -> tuple[int | None, ...] | None:
    """A list of byte counts (None entries allowed), or None when absent (older evidence)."""
    if not json_fields.present(data, key):
        return None
    listed = json_fields.items(data, key)
    with json_fields.within(key):
        values = json_fields.optional_numbers(listed, key)
    return tuple(int(v) if v is not None else None for v in values)


def _timeline_point(point: object) -> tuple[float | int | None, ...]:
    return json_fields.optional_numbers(point, "a timeline point")

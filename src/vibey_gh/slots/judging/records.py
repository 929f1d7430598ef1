"""What a sweep records: raw per-turn results, samples and log events, step by step.

Everything here is data as measured (monotonic timestamps, responses, counters); the numbers a
verdict rests on are computed from it by `metrics.py` and `judge.py`, so an evidence file can be
re-judged later against other bounds.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta, field

from ...interfaces.turns import TurnResult


class TurnRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One replayed turn: which turn, which worker sent it, and what came back.

    think_s: the seconds the worker waited before sending it (its run's tools on replay).
    closes: it was the last turn of its segment or run, so that unit ended with it.
    pass_number: the pass over the corpus it was sent in (1 = the first), marked at the head of
    its conversation (`stepping.passes`); 0: not marked (evidence older than the marks).
    block: the interleaved block it was sent in (`judging.interleaved`), or -1: not in one
    (a step that does not interleave, or the drain after its blocks ended).
    All four are written only when set (0 and False in evidence older than them, as they were).
    """

    turn_id: str
    segment_id: str
    worker: int
    result: TurnResult
    think_s: float = 0.0
    closes: bool = False
    pass_number: int = 0
    block: int = -1


class BlockRecord(msgspec.Struct, frozen=True, array_like=True):
    """One block of an interleaved step (`judging.interleaved`): from `start` to `stop`
    (monotonic seconds; no turn was sent in it after `stop`), `at_once` turns served at a time
    (one, or the step's slots)."""

    start: float
    stop: float
    at_once: Annotated[int, Meta(ge=1)]


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
    """What the runner's log said (`kind`, its line, the figures read from it), and whether it
    said it while the step replayed (a start-up line is not held against the step)."""

    kind: str
    text: str = ""
    values: dict[str, object] = field(default_factory=dict)
    during_replay: bool = True


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


class StepRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One measurement at `slots` parallel slots, as raw as it was taken, declared in the order
    its fields are written (read with `interfaces.schema.checked`: every type checked, a bad
    one named by its path; a field an older file lacks reads as its default).

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
      blocks: an interleaved step's blocks in order, one at a time and all its slots at a time
        (`judging.interleaved`); empty for a step that served all its slots throughout (and in
        evidence older than interleaving).
    """

    shape: Annotated[str, Meta(pattern="^(runs|segments)$")] = "segments"
    index: int
    slots: int
    window: int
    attempt: int = 1
    started_at: float
    ended_at: float
    load_seconds: float | None = None
    turns: tuple[TurnRecord, ...] = ()
    # written with every step, so a reader of the file knows a point's columns
    timeline_fields: tuple[str, ...] = TIMELINE_FIELDS
    # whole numbers stay whole: a point reads back as it was written
    timeline: tuple[tuple[int | float | None, ...], ...] = ()
    memory_budget_bytes: int | None = None
    gpu_budget_bytes: tuple[int | None, ...] = ()
    log_events: tuple[LogEventRecord, ...] = ()
    production: ProductionRecord = field(default_factory=ProductionRecord)
    ended_early: str | None = None
    runner_version: str | None = None
    corpus_turns: int = 0
    discarded_attempts: int = 0
    measurement: dict[str, object] | None = None
    production_footprint_bytes: int | None = None
    production_gpu_bytes: tuple[int | None, ...] | None = None
    production_footprint: str | None = None
    runner_reported: RunnerReported | None = None
    blocks: tuple[BlockRecord, ...] = ()

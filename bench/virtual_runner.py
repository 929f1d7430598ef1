"""The simulated runner's capacity model as a discrete-event simulation on a virtual clock,
for the benchmarks that run whole sweeps by the product's own rules (`paired_sweeps.py`,
`runs_sweeps.py`): the simulated runner itself serves in real time, so forty sweeps would take
hours.

A turn's work comes from its prompt and output tokens (`runners.simulated.model`; a prefix
the slot holds from the run's previous turn read `cache_speedup` times faster), shared among
the turns in flight as min(N, knee)^scaling, with a per-turn noise factor exp(noise × z);
`drift` changes the runner's speed by that factor every step. Workers replay the corpus's
segments (or whole runs) in turn as `stepping.replay` does, each waiting a turn's think time
before sending it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.runners.simulated.model import PROMPT_SPEEDUP, answer_for, prompt_tokens
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.judging.records import StepRecord, TurnRecord

GB = 1_000_000_000


def timeline(began: float, ended: float) -> tuple[tuple[float | None, ...], ...]:
    """Memory samples at both ends: inside every bound, no swap (the bench is about throughput)."""
    return tuple((t, 4 * GB, 4 * GB, 0.5, 0, 0, None, None) for t in (began, ended))


class VirtualClock:
    def __init__(self) -> None:
        self.t = 0.0

    def monotonic(self) -> float:
        return self.t

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


@dataclass
class Model:
    knee: int
    noise: float
    tokens_per_second: float
    scaling: float
    cache_speedup: float
    drift: float
    prefill_share: float = 0.0

    def true_gain(self, slots: int) -> float:
        return float(min(slots, self.knee) ** self.scaling)


@dataclass
class CorpusTurn:
    turn_id: str
    segment_id: str
    prompt: int
    cached: int
    output: int
    closes: bool
    think: float = 0.0  # seconds its worker waits before sending it (its run's tools)


def corpus_turns(
    corpus: Corpus, think: Callable[[float | None], float] = lambda _: 0.0, max_tokens: int = 768
) -> list[list[CorpusTurn]]:
    """Each segment's turns with the prompt and output tokens the simulated runner gives them
    and the wait before each (`think`, given the turn's recorded think time: the product's
    `ThinkPolicy.seconds_before`); a turn after the first of its segment shares the previous
    one's prompt as a prefix."""
    segments = []
    for segment in corpus.segments:
        turns, previous = [], 0
        for place, turn in enumerate(segment.turns):
            prompt = prompt_tokens(turn.messages, turn.tools)  # type: ignore[arg-type]
            cap = min(max_tokens, turn.max_tokens or max_tokens)
            answer = answer_for(turn.messages, turn.tools, cap, loaded=False, noise=0.0)  # type: ignore[arg-type]
            closes = place == len(segment.turns) - 1
            cached = min(previous, prompt)
            turns.append(
                CorpusTurn(
                    turn.id, segment.id, prompt, cached, answer.output_tokens, closes,
                    think(turn.think_s),
                )
            )  # fmt: skip
            previous = prompt
        segments.append(turns)
    return segments


def work_of(turn: CorpusTurn, model: Model, z: float) -> float:
    """Seconds alone on the runner: `model.work_seconds` with a cached prefix read faster."""
    read = model.tokens_per_second * PROMPT_SPEEDUP
    uncached = turn.prompt - turn.cached
    prompt_s = uncached / read + turn.cached / (read * model.cache_speedup)
    return (turn.output / model.tokens_per_second + prompt_s) * math.exp(model.noise * z)


def share_of(turn: CorpusTurn, model: Model) -> float:
    """A turn's weight in the runner's sharing: 1 for processor sharing; with
    `prefill_share`, a turn with a long uncached prompt takes more of the runner while it
    reads it (as a CPU runner's prefill holds back the turns decoding beside it), so the
    turns served together take unequal times for their work."""
    return 1.0 + model.prefill_share * (turn.prompt - turn.cached) / 1000.0


@dataclass
class Worker:
    queue: list[CorpusTurn] = field(default_factory=list)
    turn: CorpusTurn | None = None
    started: float = 0.0  # when the turn is sent: after its think time
    remaining: float = 0.0
    done: bool = False


def simulate_step(
    index: int,
    slots: int,
    segments: list[list[CorpusTurn]],
    model: Model,
    rng: random.Random,
    clock: VirtualClock,
    keep_going: Callable[[list[TurnRecord]], bool],
    shape: str = "segments",
    by_turn: bool = False,
) -> StepRecord:
    """`slots` closed-loop workers replaying the corpus's segments in turn (whole passes, then
    on while `keep_going`), each waiting a turn's think time before sending it, served by
    processor sharing at min(n, knee)^scaling; once the sweep winds down and every corpus turn
    has an answer, the workers stop after their turn in flight (as `stepping.replay`).
    `by_turn` (a step judged by the closed-system law): `keep_going` is asked before every
    turn, and once it says enough the workers stop before their next turn, those waiting out
    a think time at once, without a whole pass."""
    speed = (1.0 + model.drift) ** index
    began = clock.t
    workers = [Worker() for _ in range(slots)]
    records: list[TurnRecord] = []
    wanted = {t.turn_id for s in segments for t in s}
    answered: set[str] = set()
    taken = 0
    finishing = False

    def start_next(worker_id: int) -> None:
        nonlocal taken, finishing
        worker = workers[worker_id]
        if finishing and (by_turn or wanted <= answered):
            worker.done, worker.turn = True, None
            return
        if by_turn and worker.queue and not keep_going(records):
            finishing = True
            worker.done, worker.turn = True, None
            return
        if not worker.queue:
            whole = taken >= len(segments) or by_turn
            if whole and (finishing or not keep_going(records)):
                finishing = True
                worker.done, worker.turn = True, None
                return
            worker.queue = list(segments[taken % len(segments)])
            taken += 1
        worker.turn = worker.queue.pop(0)
        worker.started = clock.t + worker.turn.think
        worker.remaining = work_of(worker.turn, model, rng.gauss(0.0, 1.0))

    for worker_id in range(slots):
        start_next(worker_id)
        worker = workers[worker_id]
        if by_turn and worker.turn is not None:
            # as `stepping.replay`: worker i waits i/N of its run's mean think time more
            run = [worker.turn, *worker.queue]
            worker.started += sum(t.think for t in run) / len(run) * worker_id / slots
    while True:
        if finishing and (by_turn or wanted <= answered):
            for worker in workers:  # a worker still waiting out a think time stops at once
                if worker.turn is not None and worker.started > clock.t:
                    worker.turn = None
        pending = [w for w in workers if w.turn is not None]
        if not pending:
            break
        busy = [w for w in pending if w.started <= clock.t + 1e-12]
        waits = [w.started - clock.t for w in pending if w.started > clock.t + 1e-12]
        rates: list[float] = []
        if busy:
            total = speed * min(len(busy), model.knee) ** model.scaling
            weights = [share_of(w.turn, model) for w in busy if w.turn is not None]
            rates = [total * weight / sum(weights) for weight in weights]
        serving = {id(w) for w in busy}
        served = [w.remaining / rate for w, rate in zip(busy, rates, strict=True)]
        elapsed = min(served + waits)
        clock.t += elapsed
        for worker, rate in zip(busy, rates, strict=True):
            worker.remaining -= elapsed * rate
        for worker_id, worker in enumerate(workers):
            if id(worker) in serving and worker.turn is not None and worker.remaining <= 1e-9:
                turn = worker.turn
                result = TurnResult(
                    200, "stop", turn.prompt, turn.output, "", (), worker.started, clock.t, None,
                    cached_tokens=turn.cached,
                )  # fmt: skip
                records.append(
                    TurnRecord(
                        turn.turn_id, turn.segment_id, worker_id, result, turn.think, turn.closes
                    )
                )
                answered.add(turn.turn_id)
                start_next(worker_id)
    return StepRecord(
        index=index,
        slots=slots,
        window=8192,
        attempt=1,
        started_at=began,
        ended_at=clock.t,
        load_seconds=None,
        turns=tuple(records),
        timeline=timeline(began, clock.t),
        memory_budget_bytes=24 * GB,
        corpus_turns=sum(len(s) for s in segments),
        measurement={"why_ended": ""},
        shape=shape,
    )

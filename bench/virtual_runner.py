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

`wander` is the machine's own slow wander, as measured on the real two-core machine (one slot's
speed moving 5–10% from one 20 s stretch to the next, whichever runner process serves it): the
runner's speed is multiplied by exp(w(t)), w a stationary Ornstein–Uhlenbeck process in virtual
time with standard deviation `wander` and correlation time `wander_seconds`, held for
`WANDER_TICK` seconds at a time (an AR(1) with φ = exp(−tick / wander_seconds)). It belongs to
the machine, not to a step: one `Wander` serves a whole sweep on its one clock, so a step's start
does not reset it, and it is drawn from its own generator seeded by the sweep's seed, so a
sweep is reproducible and the turns' own noise draws are the same with or without it. A turn
in service across a tick is served at each tick's level in turn. `wander` 0 (the default) adds
no events and changes no figure.

An interleaved step (`gate`, a `virtual_gate.VirtualGate`: the product's `BlockGate` asked
without waiting) sends each turn, its think time waited, only when the gate admits it: one turn
at a time by worker 0 in a one-slot block, N at a time in an N block, fillers (in no block)
while an N block's turns finish, every block closing on its time (an event of its own).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from virtual_gate import VirtualGate

from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.runners.simulated.model import PROMPT_SPEEDUP, answer_for, prompt_tokens
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.judging.records import StepRecord, TurnRecord
from vibey_gh.slots.measurement.stepping.block_gate import FILLER, OUTSIDE

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
    wander: float = 0.0  # the machine's speed wanders as exp(w), w of this standard deviation
    wander_seconds: float = 30.0  # w's correlation time, in virtual seconds

    def true_gain(self, slots: int) -> float:
        return float(min(slots, self.knee) ** self.scaling)


WANDER_TICK = 1.0  # seconds of virtual time the machine's wandering level holds


class Wander:
    """The machine's speed level exp(w(t)) over one sweep's virtual time: w is an AR(1) at
    `WANDER_TICK` steps, stationary from its first tick (w(0) drawn from N(0, wander²)), so
    every step, first or last, sees the same spread of levels."""

    def __init__(self, model: Model, seed: int) -> None:
        self.sd = model.wander
        seconds = model.wander_seconds
        self.phi = math.exp(-WANDER_TICK / seconds) if seconds > 0 else 0.0
        self.rng = random.Random(f"wander {seed}")
        self.levels: list[float] = []
        self.w = 0.0

    @property
    def active(self) -> bool:
        return self.sd > 0

    def tick_of(self, t: float) -> int:
        # a hair forward, so that a clock landing on a tick's edge by rounding is in the next tick
        return int(math.floor((t + 1e-9) / WANDER_TICK))

    def level(self, t: float) -> float:
        """exp(w) for the tick holding t (1 when the machine does not wander)."""
        if not self.active:
            return 1.0
        tick = self.tick_of(t)
        while len(self.levels) <= tick:
            z = self.rng.gauss(0.0, 1.0)
            if self.levels:
                self.w = self.phi * self.w + math.sqrt(1.0 - self.phi**2) * self.sd * z
            else:
                self.w = self.sd * z
            self.levels.append(math.exp(self.w))
        return self.levels[tick]

    def until_change(self, t: float) -> float:
        """Seconds from t to the next tick's edge, where the level may change."""
        return (self.tick_of(t) + 1) * WANDER_TICK - t


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
    started: float = 0.0  # when the turn is sent: after its think time (and its gate)
    remaining: float = 0.0
    # the interleaved block the turn was sent in (`OUTSIDE`: in none); None while it waits
    # at the step's gate to be sent
    block: int | None = OUTSIDE
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
    wander: Wander | None = None,
    gate: VirtualGate | None = None,
) -> StepRecord:
    """`slots` closed-loop workers replaying the corpus's segments in turn (whole passes, then
    on while `keep_going`), each waiting a turn's think time before sending it, served by
    processor sharing at min(n, knee)^scaling; once the sweep winds down and every corpus turn
    has an answer, the workers stop after their turn in flight (as `stepping.replay`).
    `by_turn` (a step judged by the closed-system law): `keep_going` is asked before every
    turn, and once it says enough the workers stop before their next turn, those waiting out
    a think time at once, without a whole pass. `wander` (the sweep's one, continuing from the
    step before) multiplies the runner's speed by the machine's level of the moment. `gate`
    (an interleaved step's, `virtual_gate`): every turn, its think time waited, is sent only
    when the gate admits it, and records the block it was sent in; the gate is released
    once the step winds down, as `stepping.replay` does."""
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
                if gate is not None:
                    gate.release()
                worker.done, worker.turn = True, None
                return
            worker.queue = list(segments[taken % len(segments)])
            taken += 1
        worker.turn = worker.queue.pop(0)
        worker.started = clock.t + worker.turn.think
        worker.block = OUTSIDE if gate is None else None
        worker.remaining = work_of(worker.turn, model, rng.gauss(0.0, 1.0))

    def admit() -> None:
        """Send the turns the gate admits now, of the workers past their think time."""
        if gate is None:
            return
        gate.advance()
        for worker_id, worker in enumerate(workers):
            ready = worker.started <= clock.t + 1e-12
            if worker.turn is not None and worker.block is None and ready:
                block = gate.try_enter(worker_id)
                if block is not None:
                    worker.block, worker.started = block, max(worker.started, clock.t)

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
        admit()
        pending = [w for w in workers if w.turn is not None]
        if not pending:
            break
        busy = [w for w in pending if w.started <= clock.t + 1e-12 and w.block is not None]
        waits = [w.started - clock.t for w in pending if w.started > clock.t + 1e-12]
        edge = gate.next_change() if gate is not None else None
        if edge is not None:
            waits.append(edge)  # the block closes on its time, asked or not
        if not busy and not waits:
            raise RuntimeError("the step's workers wait at its gate with nothing to wake them")
        rates: list[float] = []
        if busy:
            total = speed * min(len(busy), model.knee) ** model.scaling
            if wander is not None and wander.active:
                total *= wander.level(clock.t)
                waits.append(wander.until_change(clock.t))  # the level holds until then
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
                block = OUTSIDE if worker.block is None else worker.block
                records.append(
                    TurnRecord(
                        turn.turn_id, turn.segment_id, worker_id, result, turn.think, turn.closes,
                        block=OUTSIDE if block == FILLER else block,  # a filler: in no block
                    )
                )  # fmt: skip
                answered.add(turn.turn_id)
                if gate is not None:
                    gate.leave(block)
                start_next(worker_id)
    if gate is not None:
        gate.release()  # as the replay's end does (released already where it wound down)
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
        blocks=gate.blocks if gate is not None else (),
    )

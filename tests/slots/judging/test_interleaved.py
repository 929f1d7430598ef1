"""An interleaved step reads its gain against one slot at the same minutes of the machine."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from msgspec.structs import replace

from tests.slots.judging.test_steady_state import closed_loop
from tests.slots.judging.test_work import COSTS, _one_slot, _step
from tests.support.slot_builders import answer
from vibey_gh.slots.judging.baseline import step_latency, sweep_figures
from vibey_gh.slots.judging.interleaved import block_pairs, own_prices, turns_at_full
from vibey_gh.slots.judging.records import BlockRecord, StepRecord, TurnRecord
from vibey_gh.slots.judging.statistics.paired import (
    ClusterWork,
    StepWork,
    capacity_ratio,
    own_log_se,
)
from vibey_gh.slots.judging.work import Pairing, pairing_of


def _interleaved(
    gain: float,
    level: Callable[[float], float],
    blocks: int = 20,
    block_seconds: float = 20.0,
    slots: int = 2,
) -> StepRecord:
    """A step of `slots` slots in blocks 1, N, N, 1, … as the gate serves them: at one slot
    worker 0 alone, each turn its cost over the machine's `level` when sent; at N every
    worker, each turn N / `gain` times that (N of them do `gain` × one slot's work). A worker
    sends while its block lasts; a one-slot block starts once the N block's turns ended. The
    turns are a quarter of the one-slot runs' (a machine four times as fast: the level the
    step's own one-slot blocks read cancels in its gain)."""
    turns: list[TurnRecord] = []
    records: list[BlockRecord] = []
    free = [0.0] * slots  # when each worker's turn in flight ends
    clock, next_turn, before = 0.0, 0, 1
    for index in range(blocks):
        at_once = 1 if index % 4 in (0, 3) else slots
        start = max(clock, *free) if at_once < before else clock
        for worker in range(at_once):
            sent = max(free[worker], start)
            while sent < start + block_seconds:
                k = next_turn % len(COSTS)
                next_turn += 1
                slower = at_once / gain if at_once > 1 else 1.0
                seconds = COSTS[k] / 4.0 / level(sent) * slower
                result = answer("a", started=sent, ended=sent + seconds)
                turns.append(TurnRecord(f"t{k}", f"s{k}", worker, result, block=index))
                sent += seconds
            free[worker] = sent
        records.append(BlockRecord(start, start + block_seconds, at_once))
        clock, before = start + block_seconds, at_once
    turns.sort(key=lambda t: t.result.ended)
    return replace(closed_loop(slots, [1.0], index=2), turns=tuple(turns), blocks=tuple(records))


def _pairing() -> Pairing:
    pairing = pairing_of([_step(1, _one_slot(i, 1.0), i) for i in range(2)])
    assert pairing is not None
    return pairing


def _gain(step: StepRecord, pairing: Pairing) -> tuple[float, float, int]:
    work = pairing.work_of(step)
    assert work is not None
    ratio = pairing.gain(work)
    assert ratio is not None and ratio.log_se is not None
    return ratio.value, ratio.log_se, ratio.clusters


def test_a_machine_that_slows_through_the_step_leaves_the_gain_as_it_is() -> None:
    pairing = _pairing()
    # the machine at 80% of its one-slot runs' speed, slowing by a further 20% over the step
    slowing = _interleaved(1.5, lambda t: 0.8 - 0.2 * t / 400.0)
    value, log_se, pairs = _gain(slowing, pairing)
    assert value == pytest.approx(1.5, rel=0.03)
    assert log_se < 0.03
    assert pairs == 10  # twenty blocks, ten pairs: its degrees of freedom are its own
    # the same step read by its window against the one-slot runs carries the machine's level
    # (here four times as fast, at 80% to 60% of that)
    plain = pairing.step_work(slowing.turns, 2, (0.0, slowing.blocks[-1].stop))[0]
    read_plain = pairing.gain(plain)
    assert read_plain is not None and read_plain.value > 1.5 * 2


def test_a_machine_that_wanders_widens_the_interval_but_does_not_move_it() -> None:
    pairing = _pairing()
    steady_value, steady_se, _ = _gain(_interleaved(1.3, lambda t: 1.0), pairing)
    wander = _interleaved(1.3, lambda t: 1.0 + 0.1 * math.sin(t / 37.0))
    value, log_se, _ = _gain(wander, pairing)
    assert steady_value == pytest.approx(1.3, rel=0.01)
    assert log_se > steady_se
    low, high = value * math.exp(-3 * log_se), value * math.exp(3 * log_se)
    assert low < 1.3 < high


def test_two_interleaved_steps_compare_by_their_gains() -> None:
    pairing = _pairing()
    two = pairing.work_of(_interleaved(1.4, lambda t: 0.7))
    three = pairing.work_of(replace(_interleaved(1.6, lambda t: 1.1, slots=3), index=3))
    assert two is not None and three is not None
    ratio = capacity_ratio([three], [two])
    assert ratio is not None and ratio.value == pytest.approx(1.6 / 1.4, rel=0.03)


def test_the_figures_of_an_interleaved_step_carry_no_between_run_spread() -> None:
    one = [_step(1, _one_slot(0, 1.0), 0), _step(1, _one_slot(1, 1.25), 1)]
    step = _interleaved(1.5, lambda t: 1.0)
    figures = sweep_figures([*one, step])
    metrics = figures.steps[-1].metrics
    assert metrics.capacity_gain == pytest.approx(1.5, rel=0.03)
    assert metrics.capacity_gain_se is not None and metrics.capacity_gain_se < 0.03
    # the same turns without blocks are one run against runs that strayed 25%
    plain = sweep_figures([*one, replace(step, blocks=())]).steps[-1].metrics
    assert plain.capacity_gain_se is not None and plain.capacity_gain_se > 0.05


def test_pairs_are_neighbouring_blocks_both_closed() -> None:
    blocks = [BlockRecord(i * 10.0, i * 10.0 + 10.0, 1 if i % 4 in (0, 3) else 2) for i in range(7)]
    assert block_pairs(blocks) == [(0, 1), (3, 2), (4, 5)]
    assert block_pairs(blocks, until=35.0) == [(0, 1)]
    assert block_pairs([]) == []
    # a block of no time (an edited file) pairs with nothing
    edited = [blocks[0], BlockRecord(10.0, 10.0, 2), *blocks[2:]]
    assert block_pairs(edited) == [(3, 2), (4, 5)]


def test_latency_is_read_from_the_blocks_of_all_the_slots() -> None:
    step = _interleaved(1.5, lambda t: 1.0)
    full = turns_at_full(step.turns, step.blocks, 2)
    assert full and all(step.blocks[t.block].at_once == 2 for t in full)
    assert len(full) < len(step.turns)
    assert step_latency(step).turns == len(full)
    assert turns_at_full(step.turns, (), 2) == list(step.turns)


def test_a_level_shared_by_a_pairs_blocks_is_no_noise_and_is_left_out_pair_by_pair() -> None:
    levels = [0.8, 1.1, 0.9, 1.3, 1.0, 0.7, 1.2, 0.95]
    reference = tuple(ClusterWork(level * 10.0, 10.0) for level in levels)
    # each N block does 1.5 times its one-slot neighbour's work in the same time (two slots)
    blocks = tuple(ClusterWork(1.5 * level * 10.0, 2 * 10.0) for level in levels)
    paired = StepWork(2, {"t": ClusterWork(1.0, 1.0)}, blocks, reference=reference)
    alone = StepWork(2, {"t": ClusterWork(1.0, 1.0)}, blocks)
    assert own_log_se(paired) == pytest.approx(0.0, abs=1e-12)
    se = own_log_se(alone)
    assert se is not None and se > 0.05
    # a pair whose N block did less than its neighbour shows in the paired noise
    uneven = (*blocks[:-1], ClusterWork(1.2 * levels[-1] * 10.0, 20.0))
    noisy = own_log_se(StepWork(2, {"t": ClusterWork(1.0, 1.0)}, uneven, reference=reference))
    assert noisy is not None and noisy > 0.01


def test_fewer_than_eight_pairs_give_no_interval() -> None:
    pairing = _pairing()
    short = pairing.work_of(_interleaved(1.5, lambda t: 1.0, blocks=15))  # seven pairs
    assert short is not None
    ratio = pairing.gain(short)
    assert ratio is not None and ratio.value == pytest.approx(1.5, rel=0.03)
    assert ratio.log_se is None  # read as a point: inconclusive, never decided


def test_an_interleaved_gain_over_any_one_slot_bar_carries_its_own_pairs_noise_alone() -> None:
    """Against a one-slot run read as a bar (the best step so far may be one), an interleaved
    step's gain is its own N blocks over its own one-slot blocks: a run of one pass, a few
    blocks of time, would give the comparison no interval at all."""

    def one_pass(index: int) -> StepRecord:
        return _step(1, _one_slot(index, 1.0)[: len(COSTS)], index)

    pairing = pairing_of([one_pass(0), one_pass(1)])
    assert pairing is not None
    step = _interleaved(1.4, lambda t: 0.9 + 0.05 * math.sin(t / 23.0), blocks=24)
    work = pairing.work_of(step)
    assert work is not None
    gain = pairing.gain(work)
    assert gain is not None and gain.log_se is not None
    assert gain.log_se == pytest.approx(own_log_se(work)) and gain.clusters == 12
    assert gain.value == pytest.approx(1.4, rel=0.05)
    # read as a ratio with the runs its degrees of freedom were the turns served, not its pairs
    with_runs = capacity_ratio([work], pairing.pool)
    assert with_runs is not None and with_runs.clusters == len(COSTS) != gain.clusters


def test_turns_are_priced_from_the_steps_own_one_slot_blocks_and_the_runs_scaled_to_them() -> None:
    """A lone turn in the step's own runner is its best price; the runs' samples count too,
    scaled to the blocks' level on the turns both hold, and a turn neither holds is priced by
    the fallback scaled alike."""
    step = _interleaved(1.4, lambda t: 1.0, blocks=8)
    alone = [t for t in step.turns if step.blocks[t.block].at_once == 1]
    seen = {t.turn_id: t.result.ended - t.result.started for t in alone}  # each k: COSTS[k] / 4
    # the runs held every turn twice, at twice the blocks' times (a slower runner)
    runs = {k: (2 * v, 2 * v) for k, v in seen.items()}
    price = own_prices(step.turns, step.blocks, runs, lambda t: (8.0, True))
    for turn in alone[:3]:
        assert price(turn)[0] == pytest.approx(seen[turn.turn_id]) and not price(turn)[1]
    stranger = replace(alone[0], turn_id="never-alone")
    assert price(stranger) == (pytest.approx(4.0), True)  # 8 s at the runs' level, halved
    # a step not yet past its first one-slot block reads the runs as they are
    early = own_prices(step.turns, step.blocks, runs, lambda t: (8.0, True), until=0.0)
    assert early(alone[0])[0] == pytest.approx(2 * seen[alone[0].turn_id])

"""The gate an interleaved step's workers pass: blocks 1, N, N, 1 on the clock."""

from __future__ import annotations

import threading

import pytest

from tests.support.clocks import ManualClock
from vibey_gh.slots.judging.records import BlockRecord
from vibey_gh.slots.measurement.stepping.block_gate import (
    FILLER,
    OUTSIDE,
    BlockGate,
    quad_at_once,
)


def _would_wait(gate: BlockGate, worker: int) -> bool:
    """`worker` is kept waiting: the gate asks `stopped` again after its first look."""
    asked = [0]

    def stopped() -> bool:
        asked[0] += 1
        return asked[0] > 1

    return gate.enter(worker, stopped) == OUTSIDE


def test_blocks_run_one_then_n_then_n_then_one() -> None:
    assert [quad_at_once(i, 3) for i in range(8)] == [1, 3, 3, 1, 1, 3, 3, 1]


def test_only_worker_zero_sends_in_a_one_slot_block_and_every_worker_in_an_n_block() -> None:
    clock = ManualClock()
    gate = BlockGate(2, 10.0, clock.monotonic)
    assert gate.enter(0, lambda: False) == 0
    assert _would_wait(gate, 1)  # block 0 serves one turn at a time, worker 0's
    gate.leave(0)
    clock.t = 10.0
    assert gate.enter(1, lambda: False) == 1  # block 1: both workers
    assert gate.enter(0, lambda: False) == 1
    assert gate.blocks == (BlockRecord(0.0, 10.0, 1),)


def test_a_one_slot_block_waits_for_the_n_blocks_turns_to_drain() -> None:
    clock = ManualClock()
    gate = BlockGate(2, 10.0, clock.monotonic)
    gate.leave(gate.enter(0, lambda: False))
    clock.t = 10.0
    first, second = gate.enter(0, lambda: False), gate.enter(1, lambda: False)
    gate.leave(first)
    clock.t = 20.0
    gate.leave(gate.enter(0, lambda: False))  # block 2, the second N block, opens at once
    clock.t = 31.0
    # block 3 is one slot's: worker 1's turn still runs, and worker 0 sends a filler beside it
    filler = gate.enter(0, lambda: False)
    assert filler == FILLER
    clock.t = 34.0
    gate.leave(second)
    assert _would_wait(gate, 0)  # no filler once the block's turns are done; this one runs
    gate.leave(filler)
    assert gate.enter(0, lambda: False) == 3
    assert [b.at_once for b in gate.blocks] == [1, 2, 2]
    assert gate.blocks[-1].stop == 30.0  # on its time, though no worker asked until 31 s
    assert gate.blocks[-1].start == 20.0


def test_released_blocks_let_every_worker_send_outside_them() -> None:
    clock = ManualClock()
    gate = BlockGate(3, 10.0, clock.monotonic)
    index = gate.enter(0, lambda: False)
    clock.t = 4.0
    gate.release()
    assert gate.enter(2, lambda: False) == OUTSIDE
    gate.leave(index)
    clock.t = 40.0
    gate.leave(OUTSIDE)
    assert gate.blocks == (BlockRecord(0.0, 4.0, 1),)  # closed when released, once


def test_a_stop_wakes_a_waiting_worker() -> None:
    gate = BlockGate(2, 3600.0)
    gate.enter(0, lambda: False)
    stop = threading.Event()
    got: list[int] = []
    waiting = threading.Thread(target=lambda: got.append(gate.enter(1, stop.is_set)))
    waiting.start()
    stop.set()
    waiting.join(timeout=5.0)
    assert got == [OUTSIDE]


def test_a_gate_needs_two_slots_and_time() -> None:
    with pytest.raises(ValueError):
        BlockGate(1, 10.0)
    with pytest.raises(ValueError):
        BlockGate(2, 0.0)


def test_turns_at_a_block_edge_run_at_their_own_blocks_number_to_their_end() -> None:
    clock = ManualClock()
    gate = BlockGate(2, 10.0, clock.monotonic)
    alone = gate.enter(0, lambda: False)
    clock.t = 12.0  # block 0 closed at 10 s; worker 0's turn still runs, alone
    assert _would_wait(gate, 1)  # the N block waits for it, so it is never shared
    gate.leave(alone)
    assert gate.enter(1, lambda: False) == 1  # block 1 starts at its answer
    first = gate.enter(0, lambda: False)
    assert gate.blocks == (BlockRecord(0.0, 10.0, 1),)
    clock.t = 32.0  # blocks 1 (12–22 s) and 2 (22–32 s) closed; both turns still run
    gate.leave(first)
    # worker 0 sends a filler, in no block, so worker 1's turn of block 1 is still served
    # beside another to its end
    assert gate.enter(0, lambda: False) == FILLER
    assert _would_wait(gate, 0)  # two in flight: no more
    gate.leave(1)  # the block's last turn: no fillers after it
    assert _would_wait(gate, 0)  # the one-slot block waits for the filler too
    clock.t = 35.0
    gate.leave(FILLER)
    assert gate.enter(0, lambda: False) == 3
    assert gate.blocks[-1] == BlockRecord(22.0, 32.0, 2)
    assert [b.at_once for b in gate.blocks] == [1, 2, 2]

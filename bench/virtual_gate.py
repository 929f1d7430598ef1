"""The product's interleaving gate (`stepping.block_gate.BlockGate`) on the virtual clock, for
`virtual_runner.simulate_step`.

The product's gate is asked by worker threads that wait on it; a discrete-event simulation
cannot wait, so this asks the same gate without waiting: `try_enter` admits a worker exactly
where `BlockGate.enter` would return (and changes nothing where it would wait), and the
simulation asks again at its next event. Blocks, their closing on time, the waits between
blocks and their fillers, `leave` and `release` are the product's own code, on the virtual
clock. The one event the gate adds is its current block's scheduled end (`next_change`): at it
the simulation advances the gate, as a worker polling the real gate would, so the stopping rule
sees a block closed on its time.
"""

from __future__ import annotations

from collections.abc import Callable

from vibey_gh.slots.measurement.stepping.block_gate import OUTSIDE, BlockGate

# a block's end is stepped past by this much virtual time, so that the clock is past it in
# floating point (the block's record keeps its scheduled stop)
PAST_EDGE = 1e-9


class VirtualGate(BlockGate):
    """`BlockGate` asked from a simulation's event loop instead of waiting threads."""

    def try_enter(self, worker: int) -> int | None:
        """What `BlockGate.enter` returns if the gate admits `worker`'s turn now (the block
        it is sent in, `FILLER`, or `OUTSIDE` once released); None where it would wait."""
        with self._changed:
            if self._released:
                return OUTSIDE
            return self._admit(worker)

    def advance(self) -> None:
        """Close the blocks whose time is up (a waiting worker's poll of the real gate)."""
        with self._changed:
            self._advance()

    def next_change(self) -> float | None:
        """Seconds from now to the current block's scheduled end, stepped just past it; None
        while no block runs (draining, released, or before the first ask)."""
        with self._changed:
            if self._released or self._start is None:
                return None
            now = self.monotonic()
            return max(self._start + self.block_seconds - now, 0.0) + PAST_EDGE


def gate_for(
    slots: int, interleave_seconds: float | None, monotonic: Callable[[], float], by_turn: bool
) -> VirtualGate | None:
    """The gate a step interleaves through, as `stepping.step` decides it: above one slot,
    where blocks are asked for, and not where the think policy waits (judged turn by turn)."""
    if slots <= 1 or interleave_seconds is None or by_turn:
        return None
    return VirtualGate(slots, interleave_seconds, monotonic)

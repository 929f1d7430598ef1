"""The gate an interleaved step's workers pass before every turn (`judging.interleaved` says
why a step interleaves and how its blocks are read).

The runner is started with the step's N slots and the step is cut into blocks of
`block_seconds`, in quads served one turn at a time, N at a time, N at a time, one at a time
(1, N, N, 1), repeated. In a one-at-a-time block only worker 0 sends; in an N block every
worker sends. A block ends on its time, whether or not a worker asked then (none was admitted
after it: admitting asks).

Where the next block serves another number of turns at a time, it starts only once every turn
sent in the block before has its answer (the wait is in no block), and until then each of those
turns is served beside as many turns as in its own block: a block's work is read as the share
of each turn's service inside it (`judging.interleaved`), which is its true share only where the
turn ran at one speed throughout. So after a one-slot block worker 0's turn finishes alone
before the N block starts, and after an N block the workers whose turns finished send
*fillers* — turns in no block — while any turn of the block is still in flight; once none is,
the fillers finish and the one-slot block starts. Without this a turn straddling the edge ran
alone on one side and shared on the other, and the credit moved towards the N block: on the
simulated runner with no gain from N, a gain of +5% read from blocks four turns long and +13%
from blocks two turns long (`bench/paired_sweeps.py`, docs/performance.md). Two N blocks in a
row serve the same number at a time and follow each other at once.

Closed blocks are kept as `BlockRecord`s in order; a turn records the index of the block it
was sent in. `release` ends the blocks (the step winds down): from then on every worker sends
as it likes and its turns are in no block.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ...judging.records import BlockRecord

# how often a waiting worker looks whether its block came or the step stopped
_POLL_S = 0.05
# outside the blocks: a turn sent after `release`
OUTSIDE = -1
# a turn sent while the turns of an N block finish (in no block: recorded as OUTSIDE)
FILLER = -2


def quad_at_once(index: int, slots: int) -> int:
    """How many turns block `index` serves at a time: 1, N, N, 1 repeated."""
    return 1 if index % 4 in (0, 3) else slots


class BlockGate:
    """Admits a worker's turn in the block it belongs to (see the module)."""

    def __init__(
        self,
        slots: int,
        block_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if slots < 2 or block_seconds <= 0:
            raise ValueError("an interleaved step needs two slots or more and blocks of time")
        self.slots = slots
        self.block_seconds = block_seconds
        self.monotonic = monotonic
        self._changed = threading.Condition()
        self._closed: list[BlockRecord] = []
        self._index = 0
        # the current block's start; None while the turns of an N block drain before a one-slot
        # block, and before the first block (it starts with the first worker that asks)
        self._start: float | None = None
        self._in_flight = 0
        self._fillers = 0  # fillers in flight
        self._filling = False  # between an N block and a one-slot block: fillers may be sent
        self._released = False

    @property
    def blocks(self) -> tuple[BlockRecord, ...]:
        """The blocks closed so far, in order."""
        with self._changed:
            return tuple(self._closed)

    def enter(self, worker: int, stopped: Callable[[], bool]) -> int:
        """Wait until `worker` may send its next turn; the index of the block it is sent in,
        `FILLER` for a filler, or `OUTSIDE` once the blocks were released (or when `stopped`
        says so while it waits)."""
        with self._changed:
            while True:
                if self._released or stopped():
                    return OUTSIDE
                admitted = self._admit(worker)
                if admitted is not None:
                    return admitted
                self._changed.wait(_POLL_S)

    def leave(self, index: int) -> None:
        """The turn `enter` admitted as `index` has its answer."""
        if index == OUTSIDE:
            return
        with self._changed:
            if index == FILLER:
                self._fillers -= 1
            else:
                self._in_flight -= 1
            self._advance()
            self._changed.notify_all()

    def _admit(self, worker: int) -> int | None:
        """What `enter` returns if `worker` may send now, else None (the lock held)."""
        self._advance()
        if self._start is None:
            busy = self._in_flight + self._fillers
            if self._filling and self._in_flight > 0 and busy < self.slots:
                self._fillers += 1
                return FILLER
            return None
        at_once = quad_at_once(self._index, self.slots)
        if worker < at_once and self._in_flight < at_once:
            self._in_flight += 1
            return self._index
        return None

    def release(self) -> None:
        """End the blocks: the block in progress is closed (if it started) and every worker
        sends freely from now on."""
        with self._changed:
            now = self.monotonic()
            if not self._released and self._start is not None and now > self._start:
                self._close(now)
            self._released = True
            self._changed.notify_all()

    def _advance(self) -> None:
        if self._released:
            return
        now = self.monotonic()
        if self._start is None:
            if self._in_flight == 0 and self._fillers == 0:
                # the first block, or the next one once the turns before it had their answers
                self._start = now
                self._filling = False
                self._changed.notify_all()
            return
        # a block ends on time, asked or not: no turn was admitted since (admitting asks)
        while self._start is not None and now - self._start >= self.block_seconds:
            ended = self._start + self.block_seconds
            before = quad_at_once(self._index, self.slots)
            self._close(ended)
            self._index += 1
            after = quad_at_once(self._index, self.slots)
            waits = after != before and self._in_flight > 0
            self._filling = waits and after < before
            self._start = None if waits else ended
            self._changed.notify_all()

    def _close(self, now: float) -> None:
        assert self._start is not None
        self._closed.append(BlockRecord(self._start, now, quad_at_once(self._index, self.slots)))

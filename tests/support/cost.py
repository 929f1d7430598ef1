"""What each test costs, measured so that a busy machine does not change it (opt-in).

`VIBEY_TEST_COST=FILE pytest …` appends one JSON line per test to FILE: the wall time, the
CPU time of the test process and of the children it waited for (`getrusage` deltas over
setup, call and teardown), and the seconds the test process spent in `time.sleep`: sleeps of
FIXED_WAIT_S and more are waits by design (`fixed_wait_s`), shorter ones the beats of a loop
polling for a condition (`polling_s`, which shrinks with the machine's speed). Wall time swells
with the load of other work on the machine; CPU time and fixed waits much less, so a ranking by
CPU plus fixed waits says what a test costs on an idle machine of the same speed (a runner's
spinning threads still take more CPU on a loaded machine).
Children the suite leaves running (a runner killed, not waited for) are not counted: their
CPU is reported only to the process that reaps them.
"""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

COST_FILE_ENV = "VIBEY_TEST_COST"

_real_sleep = time.sleep
FIXED_WAIT_S = 0.5
_asleep_total = {"fixed": 0.0, "polling": 0.0}
_asleep_lock = threading.Lock()


def _counted_sleep(seconds: float) -> None:
    """`time.sleep` that adds what it waited to the test's total (every thread counts)."""
    started = time.monotonic()
    try:
        _real_sleep(seconds)
    finally:
        kind = "fixed" if seconds >= FIXED_WAIT_S else "polling"
        with _asleep_lock:
            _asleep_total[kind] += time.monotonic() - started


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    target = os.environ.get(COST_FILE_ENV)
    if not target:
        yield
        return
    time.sleep = _counted_sleep
    with _asleep_lock:
        _asleep_total.update(fixed=0.0, polling=0.0)
    wall = time.monotonic()
    own = _cpu_seconds(resource.RUSAGE_SELF)
    children = _cpu_seconds(resource.RUSAGE_CHILDREN)
    try:
        yield
    finally:
        record = {
            "test": item.nodeid,
            "wall_s": round(time.monotonic() - wall, 3),
            "cpu_s": round(_cpu_seconds(resource.RUSAGE_SELF) - own, 3),
            "children_cpu_s": round(_cpu_seconds(resource.RUSAGE_CHILDREN) - children, 3),
            "fixed_wait_s": round(_asleep_total["fixed"], 3),
            "polling_s": round(_asleep_total["polling"], 3),
        }
        time.sleep = _real_sleep
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")

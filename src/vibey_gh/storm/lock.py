"""The model lock: lanes hold it shared, a calibration holds it exclusively.

It is a `flock` (platforms.locks) on `locks/model-<node>.lock` under the state root, so the kernel
releases it when its holder dies, even by kill -9. Beside the lock, each holder writes a small
JSON side file (`locks/model-<node>.holders/<pid>-<token>.json`: pid, role, mode, since) and
removes it on
release, so a process that has to wait or is refused can say who holds the lock. Side files of
dead processes are ignored and cleaned up.

    with model_lock(layout, exclusive=True, wait=False):   # `slots calibrate`
        run_calibration(...)

The same machinery guards a storm's queue (`queue_lock`): one storm per queue folder.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import msgspec

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import EvidenceError, Refused
from ..files import PRIVATE_FILE, atomic_write_json, read_json
from ..interfaces.schema import as_json, checked
from ..platforms.process.processes import pid_alive
from ..platforms.storage.locks import open_lock_file, try_lock
from ..state import StateLayout

MODEL_LOCK = "model"
POLL_S = 0.2
HOLDER_SCHEMA = 1


class Holder(msgspec.Struct, frozen=True):
    """Who holds a lock: `role` ("calibration", "lane", "storm", …), `mode` ("shared" or
    "exclusive"), `since` (epoch seconds)."""

    pid: int
    role: str
    mode: str
    since: float

    def describe(self) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        return f"{self.role} pid {self.pid} since {stamp} ({self.mode})"


def _holders_dir(lock_path: Path) -> Path:
    return lock_path.with_name(lock_path.stem + ".holders")


def read_holders(lock_path: Path) -> list[Holder]:
    """The live holders named beside `lock_path`, oldest first; stale side files are removed
    (never through a link: a linked holders folder is read as empty)."""
    folder = _holders_dir(lock_path)
    holders: list[Holder] = []
    if folder.is_symlink() or not folder.is_dir():
        return holders
    for path in sorted(folder.glob("*.json")):
        try:
            data = read_json(path, kind="lock holder", schema_version=HOLDER_SCHEMA)
            holder = checked(data, Holder)
        except EvidenceError:  # MalformedJson too
            continue  # half-written or foreign: says nothing about who holds the lock
        if pid_alive(holder.pid):
            holders.append(holder)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return sorted(holders, key=lambda h: h.since)


def describe_holders(lock_path: Path) -> str:
    holders = read_holders(lock_path)
    if not holders:
        return "a process that did not say who it is"
    if len(holders) == 1:
        return holders[0].describe()
    return f"{len(holders)} holders: " + "; ".join(h.describe() for h in holders)


@contextlib.contextmanager
def file_lock(
    lock_path: Path,
    *,
    exclusive: bool,
    wait: bool,
    role: str,
    name: str = "lock",
    clock: Clock = SYSTEM_CLOCK,
    on_wait: Callable[[str], None] | None = None,
    timeout_s: float | None = None,
    stop: threading.Event | None = None,
) -> Iterator[Holder]:
    """Hold `lock_path` shared or exclusive while the block runs.

    wait=False: Refused naming the holder when it is taken. wait=True: poll until free,
    calling `on_wait` once with who holds it; Refused when `timeout_s` passes or `stop` is set.
    """
    mode = "exclusive" if exclusive else "shared"
    fd = open_lock_file(lock_path, PRIVATE_FILE)
    side: Path | None = None
    try:
        if not try_lock(fd, exclusive=exclusive):
            held = f"the {name} is held by {describe_holders(lock_path)}"
            if not wait:
                # the way out: the holder is named by pid, so it can be waited for or stopped
                raise Refused(f"{held}: wait for it to finish, or stop it (kill PID)")
            if on_wait is not None:
                on_wait(f"waiting: {held}")
            deadline = None if timeout_s is None else clock.monotonic() + timeout_s
            while not try_lock(fd, exclusive=exclusive):
                if stop is not None and stop.is_set():
                    raise Refused(f"stopped while waiting: {held}")
                if deadline is not None and clock.monotonic() >= deadline:
                    raise Refused(f"gave up after {timeout_s:g}s: {held}")
                clock.sleep(POLL_S)
        holder = Holder(os.getpid(), role, mode, clock.now())
        holders = _holders_dir(lock_path)
        if holders.is_symlink():
            raise Refused(
                f"the lock's holders folder {holders} is a link; locks are never taken "
                "through links out of the state dir (remove it, and it is made again)"
            )
        side = holders / f"{holder.pid}-{secrets.token_hex(4)}.json"
        atomic_write_json(side, as_json(holder, HOLDER_SCHEMA))
        yield holder
    finally:
        if side is not None:
            with contextlib.suppress(OSError):
                side.unlink()
        os.close(fd)  # closing the only descriptor releases the flock


NODE_ENV = "VIBEY_GH_NODE"


def model_lock_path(layout: StateLayout, environ: Mapping[str, str] | None = None) -> Path:
    """One lock per machine that serves the model. A state dir shared by several nodes (a
    cluster volume) must not let a calibration on one node stall lanes on another, so the
    node's name ($VIBEY_GH_NODE, else the host name) is part of the lock's name."""
    env = os.environ if environ is None else environ
    node = env.get(NODE_ENV) or socket.gethostname() or "localhost"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in node)[:64]
    return layout.locks / f"{MODEL_LOCK}-{safe}.lock"


def model_lock(
    layout: StateLayout,
    exclusive: bool = True,
    wait: bool = False,
    *,
    role: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
    on_wait: Callable[[str], None] | None = None,
    timeout_s: float | None = None,
    stop: threading.Event | None = None,
) -> contextlib.AbstractContextManager[Holder]:
    """The model lock: exclusive for a calibration (the default), shared for a lane."""
    return file_lock(
        model_lock_path(layout),
        exclusive=exclusive,
        wait=wait,
        role=role or ("calibration" if exclusive else "lane"),
        name="model lock",
        clock=clock,
        on_wait=on_wait,
        timeout_s=timeout_s,
        stop=stop,
    )


def model_lock_holders(layout: StateLayout) -> list[Holder]:
    return read_holders(model_lock_path(layout))

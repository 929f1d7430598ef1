"""The storm's queue folder: lane specs move pending/ → running/ → done/ or failed/.

    QUEUE/pending/*.toml     specs waiting to run (the operator drops them here)
    QUEUE/running/*.toml     claimed specs; beside each, `<name>.run.json` names its lane run
    QUEUE/done/*.toml        lanes that ran to their end (answered, or out of turns)
    QUEUE/failed/*.toml      lanes that stopped on an error (see their record)

Every move is one `os.rename` inside the queue folder, followed by an fsync of both folders,
so a spec is always in exactly one place. A claim first moves the spec to running/, then writes
its `.run.json` (run id, time, pid); the lane starts only after both. An interrupted lane goes
back to pending/. A name already taken in the destination gets a numbered suffix: nothing in
the queue is ever overwritten.

After a crash (kill -9, a reboot) `recover` settles running/ from the lane records: a spec
whose record has an end event goes where that end says — done/, failed/, or back to pending/
when it was interrupted — and a spec with no claim file or no finished record goes back to
pending/, so no finished lane runs twice and no claimed lane is lost.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import BadInput, EvidenceError
from ..files import atomic_write_json, ensure_private_dir, read_json
from ..lanes.records import EVENTS_FILE, read_record
from ..platforms.storage.durability import fsync_directory
from ..platforms.storage.system_paths import check_output_folder

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
STATES = (PENDING, RUNNING, DONE, FAILED)
SPEC_SUFFIX = ".toml"
CLAIM_SUFFIX = ".run.json"
CLAIM_SCHEMA = 1
STATE_OF_END = {"answered": DONE, "max_turns": DONE, "failed": FAILED, "interrupted": PENDING}


class Claim(msgspec.Struct, frozen=True):
    """A spec moved to running/ and the lane run that owns it."""

    name: str
    run_id: str
    spec_path: Path
    claimed_at: float


def _free_name(folder: Path, name: str) -> str:
    if not (folder / name).exists() and not (folder / (name + CLAIM_SUFFIX)).exists():
        return name
    stem = name[: -len(SPEC_SUFFIX)] if name.endswith(SPEC_SUFFIX) else name
    number = 2
    while (folder / f"{stem}-{number}{SPEC_SUFFIX}").exists():
        number += 1
    return f"{stem}-{number}{SPEC_SUFFIX}"


class StormQueue:
    """One queue folder. Only one storm works a queue at a time (the storm's queue lock)."""

    def __init__(self, root: Path, clock: Clock = SYSTEM_CLOCK) -> None:
        check_output_folder(root, "queue folder")  # the storm writes its folders and lock there
        if not root.is_dir():
            raise BadInput(f"no such queue folder: {root} (it needs a pending/ folder of specs)")
        self.root = root.resolve()
        self.clock = clock
        for state in STATES:
            ensure_private_dir(self.root / state)

    def folder(self, state: str) -> Path:
        return self.root / state

    def specs(self, state: str) -> list[str]:
        """Spec file names in `state`, sorted (hidden and non-.toml files are not specs)."""
        return sorted(
            path.name
            for path in self.folder(state).iterdir()
            if path.name.endswith(SPEC_SUFFIX) and not path.name.startswith(".") and path.is_file()
        )

    def pending(self) -> list[str]:
        return self.specs(PENDING)

    def counts(self) -> dict[str, int]:
        return {state: len(self.specs(state)) for state in STATES}

    def counts_text(self, counts: dict[str, int] | None = None) -> str:
        """ "5 pending, 0 running, 2 done, 1 failed": the counts as a log line says them."""
        counts = self.counts() if counts is None else counts
        return ", ".join(f"{counts.get(state, 0)} {state}" for state in STATES)

    def _move(self, source: str, name: str, target: str) -> str:
        """Rename `name` from `source` into `target` (under a free name); return that name."""
        destination = _free_name(self.folder(target), name)
        os.rename(self.folder(source) / name, self.folder(target) / destination)
        fsync_directory(self.folder(target))
        fsync_directory(self.folder(source))
        return destination

    def claim(self, name: str, run_id: str) -> Claim | None:
        """Move pending/`name` to running/ and write its claim; None if it is gone or a spec of
        that name is already running."""
        if (self.folder(RUNNING) / name).exists():
            return None
        try:
            os.rename(self.folder(PENDING) / name, self.folder(RUNNING) / name)
        except FileNotFoundError:
            return None
        fsync_directory(self.folder(RUNNING))
        fsync_directory(self.folder(PENDING))
        claimed_at = self.clock.now()
        atomic_write_json(
            self.claim_path(name),
            {
                "schema_version": CLAIM_SCHEMA,
                "kind": "vibey-gh storm claim",
                "spec": name,
                "run_id": run_id,
                "claimed_at": claimed_at,
                "pid": os.getpid(),
            },
        )
        return Claim(name, run_id, self.folder(RUNNING) / name, claimed_at)

    def claim_path(self, name: str, state: str = RUNNING) -> Path:
        return self.folder(state) / (name + CLAIM_SUFFIX)

    def read_claim(self, name: str) -> str | None:
        """The run id claimed for running/`name`, or None when there is no usable claim."""
        try:
            data = read_json(self.claim_path(name), kind="storm claim", schema_version=CLAIM_SCHEMA)
        except EvidenceError:
            return None
        run_id = data.get("run_id")
        return run_id if isinstance(run_id, str) and run_id else None

    def settle(self, name: str, state: str) -> str:
        """Move running/`name` to `state`; its claim goes along to done/ and failed/ (it names
        the lane record) and is dropped when the spec returns to pending/."""
        if state not in (PENDING, DONE, FAILED):
            raise ValueError(f"cannot settle a spec into {state!r}")
        destination = self._move(RUNNING, name, state)
        claim = self.claim_path(name)
        if state == PENDING:
            claim.unlink(missing_ok=True)
        elif claim.exists():
            os.rename(claim, self.claim_path(destination, state))
            fsync_directory(self.folder(state))
        fsync_directory(self.folder(RUNNING))
        return destination

    def recover(self, records_root: Path) -> list[str]:
        """Settle what a crash left in running/ (rules in the module docstring); one line of
        explanation per spec moved."""
        lines: list[str] = []
        for name in self.specs(RUNNING):
            run_id = self.read_claim(name)
            state, why = self._recovered_state(records_root, run_id)
            destination = self.settle(name, state)
            lines.append(f"recovered {name}: {why} → {state}/{destination}")
        for claim in sorted(self.folder(RUNNING).glob("*" + CLAIM_SUFFIX)):
            spec = claim.name[: -len(CLAIM_SUFFIX)]
            moved = False
            for state in (DONE, FAILED):
                settled = self.folder(state) / spec
                target = self.claim_path(spec, state)
                if settled.exists() and not target.exists():
                    os.rename(claim, target)
                    moved = True
                    break
            if not moved:
                with contextlib.suppress(FileNotFoundError):
                    claim.unlink()
            lines.append(f"recovered the claim file of {spec}")
        return lines

    @staticmethod
    def _recovered_state(records_root: Path, run_id: str | None) -> tuple[str, str]:
        if run_id is None:
            return PENDING, "claimed but never started"
        events = records_root / run_id / EVENTS_FILE
        if not events.is_file():
            return PENDING, f"lane {run_id} never started"
        try:
            record = read_record(events)
        except BadInput as exc:
            return PENDING, f"lane {run_id} has an unreadable record ({exc})"
        status = record.status
        if status is None:
            return PENDING, f"lane {run_id} did not finish"
        return STATE_OF_END.get(status, PENDING), f"lane {run_id} ended {status}"

"""Resuming a sweep: which checkpoint a rerun continues, and what it does with other options.

A checkpoint is keyed by what decides how a step is measured (fingerprint, corpus, and the
method without the sweep's extent). How far the sweep goes (`--max-slots`, `--slots`) is not
part of the key, so a rerun with a larger `--max-slots` extends the sweep it continues, and
one with a smaller one keeps the steps it still covers. A rerun whose options change how a
step is measured (`--min-step-seconds`, `--max-tokens`, …) finds the checkpoint of the same
device and corpus measured the old way and refuses, naming each option that changed: its
steps cannot be compared with steps measured the new way, and discarding hours of
measurement is the operator's call (`--restart`), never done in silence.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path

import msgspec

from ...errors import BadInput, EvidenceError
from ...state import StateLayout
from ..evidence.checkpoints import (
    load_progress,
    progress_path,
    read_progress,
    save_progress,
)
from ..evidence.store import method_hash
from ..judging.records import StepRecord

# How far a sweep goes, not how a step is measured: left out of the checkpoint key.
SWEEP_EXTENT = ("slots", "max_slots")
# The option that sets each measured key of the method, to name what changed.
OPTION_OF_METHOD_KEY = {
    "runner": "--runner",
    "model": "--model",
    "window": "--window",
    "max_tokens": "--max-tokens",
    "steps.min_seconds": "--min-step-seconds",
    # unset, the cap is derived: five minimums, eight times that with a latency bound set
    "steps.max_seconds": "--max-step-seconds (set, or derived: a latency bound lengthens it)",
    "interleave_seconds": "--interleave-seconds",
}


def measured_method(method: Mapping[str, object]) -> dict[str, object]:
    """The method without the sweep's extent: what a checkpoint's steps share."""
    return {name: value for name, value in method.items() if name not in SWEEP_EXTENT}


def checkpoint_key(
    fingerprint: str, corpus_sha: str, method: Mapping[str, object]
) -> dict[str, object]:
    return {
        "fingerprint": fingerprint,
        "corpus_sha256": corpus_sha,
        "method": method_hash(measured_method(method)),
    }


def changed_options(old: Mapping[str, object], new: Mapping[str, object]) -> list[str]:
    """Each measured setting that differs, as `--option old → new` (nested keys flattened)."""
    flat_old, flat_new = _flatten(measured_method(old)), _flatten(measured_method(new))
    changes = []
    for name in sorted(set(flat_old) | set(flat_new)):
        before, after = flat_old.get(name), flat_new.get(name)
        if before != after:
            option = OPTION_OF_METHOD_KEY.get(name, name)
            changes.append(f"{option} {_shown(before)} → {_shown(after)}")
    return changes


def _flatten(method: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for name, value in method.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _shown(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


class Checkpoint(msgspec.Struct, frozen=True):
    """The checkpoint a calibration continues and writes: its file, key and method."""

    path: Path
    key: dict[str, object]
    method: dict[str, object]

    def save(self, steps: Sequence[StepRecord]) -> None:
        save_progress(self.path, self.key, steps, self.method)


def open_checkpoint(
    layout: StateLayout,
    fingerprint: str,
    corpus_sha: str,
    method: Mapping[str, object],
    restart: bool,
    say: Callable[[str], None],
) -> tuple[Checkpoint, list[StepRecord]]:
    """The checkpoint for this sweep and the steps it already holds.

    Raises BadInput when a checkpoint of the same device and corpus was measured with other
    options (naming them) and `restart` was not asked for; with `restart`, removes it."""
    key = checkpoint_key(fingerprint, corpus_sha, method)
    measured = measured_method(method)
    path = progress_path(layout, fingerprint, corpus_sha, method_hash(measured))
    checkpoint = Checkpoint(path, key, measured)
    others = [p for p in sorted(sibling_checkpoints(layout, fingerprint, corpus_sha)) if p != path]
    if restart:
        removed = [p for p in (path, *others) if p.exists()]
        for stale in removed:
            stale.unlink(missing_ok=True)
        if removed:
            say(f"restarting: removed {len(removed)} checkpoint(s) of this device and corpus")
        return checkpoint, []
    try:
        if path.exists():
            return checkpoint, load_progress(path, key)
        for other in others:
            steps = _adopt_or_refuse(other, checkpoint, method)
            if steps is not None:
                return checkpoint, steps
    except EvidenceError as exc:
        raise BadInput(f"{exc} (or rerun with --restart)") from None
    return checkpoint, []


def sibling_checkpoints(layout: StateLayout, fingerprint: str, corpus_sha: str) -> list[Path]:
    """Every checkpoint of this fingerprint and corpus, whatever its method."""
    if not layout.progress.is_dir():
        return []
    return list(layout.progress.glob(f"{fingerprint}-{corpus_sha[:12]}-*.json"))


def _adopt_or_refuse(
    other: Path, checkpoint: Checkpoint, method: Mapping[str, object]
) -> list[StepRecord] | None:
    """The steps of a checkpoint written under the whole method's hash (before the sweep's
    extent left the key), moved to this one's name; BadInput for one measured otherwise."""
    document = read_progress(other)
    if document.key.get("method") == method_hash(dict(method)):
        steps = list(document.steps)
        checkpoint.save(steps)
        other.unlink(missing_ok=True)
        return steps
    if document.key.get("method") == checkpoint.key["method"]:
        return None  # a copy under another name; the one at our path is the one kept
    if document.method is not None:
        changes = changed_options(document.method, method)
        what = "; ".join(changes) if changes else "the measurement method changed"
    else:
        what = "other options (this checkpoint predates recording them)"
    raise BadInput(
        f"a checkpoint of this device and corpus holds {len(document.steps)} completed "
        f"step(s) measured with {what}; rerun with the earlier options to resume it, or add "
        f"--restart to discard it and start over ({other})"
    )


def replay_completed(
    generator: Generator[int, StepRecord, str],
    steps: list[StepRecord],
    checkpoint: Path,
    say: Callable[[str], None],
) -> tuple[list[StepRecord], int | None, str | None]:
    """Feed the completed steps to the sweep generator as if just measured: the steps it
    still asks for, the next slot count to measure, and why it stopped (None while going).

    A completed step the new sweep would not measure at its place (an explicit `--slots`
    that changed) is refused, naming it; steps past where the new sweep ends (a smaller
    `--max-slots`) are left out of this sweep, said out loud."""
    try:
        slots = next(generator)
    except StopIteration as stop:
        return [], None, str(stop.value)
    for index, done in enumerate(steps):
        if _closes_before(slots, done, steps[:index]):
            # the sweep ends here and closes with one slot: the larger steps the checkpoint
            # holds past this point are not part of it
            left_out = ", ".join(f"N={s.slots}" for s in steps[index:])
            say(
                f"keeping {index} of {len(steps)} completed step(s); {left_out} lie beyond "
                "where this sweep ends: left out of it, which closes with one slot"
            )
            return steps[:index], slots, None
        if done.slots != slots:
            raise BadInput(
                f"the checkpoint's step {index} measured N={done.slots} where this sweep "
                f"asks for N={slots} (--slots changed); rerun with the earlier --slots to "
                f"resume, or add --restart to start over ({checkpoint})"
            )
        try:
            slots = generator.send(done)
        except StopIteration as stop:
            kept, beyond = steps[: index + 1], steps[index + 1 :]
            if beyond:
                left_out = ", ".join(f"N={s.slots}" for s in beyond)
                say(
                    f"keeping {len(kept)} of {len(steps)} completed step(s); {left_out} "
                    "lie beyond where this sweep ends: left out of it, kept in the checkpoint"
                )
            return kept, None, str(stop.value)
    return steps, slots, None


def _closes_before(asked: int, done: StepRecord, before: list[StepRecord]) -> bool:
    """The sweep asks for its closing one-slot run where the checkpoint holds a larger step."""
    return asked == 1 and done.slots > 1 and any(s.slots > 1 for s in before)


__all__ = [
    "OPTION_OF_METHOD_KEY",
    "SWEEP_EXTENT",
    "Checkpoint",
    "changed_options",
    "checkpoint_key",
    "measured_method",
    "open_checkpoint",
    "replay_completed",
    "sibling_checkpoints",
]

"""The evidence writer: a finished (or paused) sweep as evidence JSON, with Markdown beside it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
from msgspec.structs import replace

from ...errors import BadInput
from ...files import atomic_write_json, atomic_write_text, make_private_parents
from ...guarded import InputProblem, read_regular_bytes
from ...interfaces.bounds import Bounds
from ...interfaces.schema import as_json
from ...interfaces.slots_interface import RunnerInfo
from ...platforms.storage.system_paths import check_output_folder
from ..corpus.profile import corpus_profile
from ..evidence.document import Decision, EvidenceDocument
from ..evidence.figures_cache import evidence_identity, save_figures
from ..evidence.fingerprint import Fingerprint
from ..evidence.history import PastSweep, keep_in_history, summarise
from ..evidence.sections import MethodSection
from ..evidence.store import (
    Evidence,
    evidence_path,
    method_hash,
    out_name,
    sealed_digest,
    sealed_json,
)
from ..judging.baseline import sweep_figures
from ..judging.judge import SweepJudgement, judge_sweep
from ..judging.records import StepRecord
from ..judging.verdicts import decidability
from ..report.documents.markdown import write_report
from ..report.summary import render_summary
from .calibration_setup import CalibrationOutcome, CalibrationRequest, Environment


class SweepResult(msgspec.Struct, frozen=True):
    """What a sweep produced, ready to be written down."""

    fingerprint: Fingerprint
    identity: RunnerInfo
    steps: Sequence[StepRecord]
    method: MethodSection
    stop_reason: str | None
    complete: bool
    run_dir: Path
    # why production did not answer when the sweep started (the identity is then the
    # calibration binary's); the version mismatch that keeps this sweep out of the record
    production_absent: str | None = None
    version_mismatch: str | None = None


# How a sweep is judged: `judge.judge_sweep`, or a stand-in that counts its calls.
Judge = Callable[[Sequence[StepRecord], Bounds], SweepJudgement]


def build_evidence(
    req: CalibrationRequest, env: Environment, result: SweepResult, judgement: SweepJudgement
) -> EvidenceDocument:
    """The evidence document of a sweep, with the judgement made of its steps."""
    fingerprint, identity, steps = result.fingerprint, result.identity, result.steps
    method, stop_reason, complete = result.method, result.stop_reason, result.complete
    bounds = req.config.bounds
    notes: list[str] = []
    versions = {s.runner_version for s in steps if s.runner_version}
    mismatch = [v for v in versions if identity.version and v != identity.version]
    if mismatch:
        notes.append(
            f"the calibration runner's version {mismatch[0]} differs from production's "
            f"{identity.version}: not recorded as this device's evidence"
        )
    if result.version_mismatch and not mismatch:
        mismatch = [result.version_mismatch]
        notes.append(f"{result.version_mismatch}: not recorded as this device's evidence")
    if result.production_absent:
        notes.append(
            f"production was not running ({result.production_absent}): keyed to the "
            "calibration binary's version and the model's digest"
        )
    split = bool(method.get("split_window"))
    if split:
        notes.append(
            f"a split-window what-if: the corpus was replayed at a {req.window}-token window and "
            "its deeper turns were sent and refused; written to --out only, never recorded as "
            "this device's evidence (refusing a turn one full slot serves breaks a bound)"
        )
    if not steps:
        notes.append("no clean step was measured: not recorded as this device's evidence")
    if not complete:
        notes.append(
            "the sweep is not finished ("
            + (stop_reason or "paused by --max-runs")
            + "); the decision covers the steps measured so far"
        )
    return EvidenceDocument(
        fingerprint=fingerprint.id,
        fingerprint_fields=fingerprint.fields,
        created_at=env.clock.now(),
        device={
            "sources": env.device.sources,
            "missing": env.device.missing,
            "memory_limit_bytes": env.device.memory_limit_bytes,
        },
        corpus={
            "sha256": req.corpus.corpus_sha256,
            "shape": req.corpus.shape,
            "pool_sha256": req.corpus.pool_sha256,
            "window": req.corpus.window,
            "segments": len(req.corpus.segments),
            "turns": req.corpus.turn_count,
            "strata": [as_json(s) for s in req.corpus.strata],
            "depth_estimates": {turn.id: turn.depth_estimate for turn in req.corpus.turns()},
            "profile": corpus_profile(
                req.corpus.segments, req.corpus.commits, req.corpus.sources, req.corpus.left_out
            ),
        },
        method={**method, "hash": method_hash_of(method)},
        bounds=msgspec.to_builtins(bounds),
        # how sure each step's throughput interval and each verdict's gain interval are
        confidence=bounds.confidence,
        steps=tuple(steps),
        verdicts=tuple(v.to_json() for v in judgement.verdicts),
        decision=Decision(judgement.ideal, judgement.reason, stop_reason),
        complete=complete,
        production_version=None if result.production_absent else identity.version,
        production_absent=result.production_absent,
        runner={
            "kind": identity.kind,
            "model": identity.model,
            "digest": identity.model_digest,
            "settings": identity.settings,
            "settings_source": identity.settings_source,
        },
        runs_dir=str(result.run_dir),
        notes=tuple(notes),
        recorded=bool(steps) and not mismatch and not split,
    )


def check_out_dir(out_dir: Path) -> None:
    """Refuse an --out that cannot take the evidence before the first step, not after hours of
    sweep: a path in a kernel file system (/proc, /sys, /dev), a file in the way, or a folder
    that cannot be written. Creates nothing: a sweep that ends recording nothing leaves no
    folder behind."""
    check_output_folder(out_dir, "--out")
    existing = out_dir
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    problem = None
    if not existing.is_dir():
        problem = f"{existing} is not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing} is not writable"
    if problem is not None:
        raise BadInput(f"--out {out_dir}: cannot write there ({problem}); give a writable folder")


def method_hash_of(method: MethodSection) -> str:
    return method_hash(method)


def write_evidence_files(
    req: CalibrationRequest, env: Environment, result: SweepResult, judge: Judge = judge_sweep
) -> CalibrationOutcome:
    """Write the evidence, its summary and its report; the sweep is judged once, here, and
    that judgement is what the evidence, the summary, the report and its plots say."""
    fingerprint, steps, stop_reason = result.fingerprint, result.steps, result.stop_reason
    bounds = req.config.bounds
    judgement = judge(steps, bounds)
    document = build_evidence(req, env, result, judgement)
    data = sealed_json(document)
    evidence = Evidence(None, document)
    markdown = render_summary(evidence, bounds, judgement)
    written: list[Path] = []
    recorded_path: Path | None = None
    replacing = _replacing(env, document) if document.recorded else None
    # a paused sweep beside complete evidence: that stays; this one's steps are in the checkpoint
    recorded = document.recorded and not (replacing is not None and replacing.keeps_the_old)
    if recorded:
        recorded_path = evidence_path(env.layout, fingerprint.id)
        if replacing is not None and replacing.goes_to_history:
            replacing = replacing.kept_at(
                keep_in_history(env.layout, fingerprint.id, replacing.raw, replacing.past)
            )
        # the new evidence is sealed (`data`) before the old one's place is taken
        atomic_write_json(recorded_path, data)
        # the figures `slots allowed` judges on, so its first answer need not parse all this
        save_figures(
            env.layout,
            fingerprint.id,
            evidence_identity(recorded_path),
            sealed_digest(data),
            sweep_figures(evidence.steps),
        )
        atomic_write_text(recorded_path.with_suffix(".md"), markdown)
        write_report(
            evidence, bounds, recorded_path.parent, recorded_path.stem, judgement=judgement
        )
    if req.out_dir is not None:
        make_private_parents(req.out_dir)  # the user's folder: made if missing, never changed
        out_json = req.out_dir / out_name(fingerprint.id, document.recorded)
        atomic_write_json(out_json, data)
        atomic_write_text(out_json.with_suffix(".md"), markdown)
        written += [out_json, out_json.with_suffix(".md")]
        written += write_report(evidence, bounds, req.out_dir, out_json.stem, judgement=judgement)
    return CalibrationOutcome(
        fingerprint=fingerprint.id,
        ideal=judgement.ideal if steps else None,
        reason=judgement.reason if steps else document.notes[0],
        recorded=recorded,
        complete=result.complete,
        evidence=recorded_path,
        out_files=tuple(written),
        stop_reason=stop_reason,
        verdict_code=decidability(judgement, bounds).code if steps else None,
        replaced=replacing.past.listed()
        if replacing is not None and recorded and replacing.goes_to_history
        else None,
        kept=replacing.past.listed() if replacing is not None and not recorded else None,
        other_corpus=replacing is not None
        and replacing.past.corpus_sha256 != req.corpus.corpus_sha256,
    )


class Replacing(msgspec.Struct, frozen=True):
    """The evidence a recorded sweep would take the place of: its bytes and what they say.

    keeps_the_old: the new sweep is paused or stopped and the old is complete, usable evidence,
    which a part of a sweep never replaces. goes_to_history: the old is kept before it is
    replaced, unless it is this very sweep's earlier pause (its steps are all in the new one).
    """

    raw: bytes
    past: PastSweep
    keeps_the_old: bool
    goes_to_history: bool

    def kept_at(self, path: Path) -> Replacing:
        return replace(self, past=replace(self.past, path=path))


def _replacing(env: Environment, document: EvidenceDocument) -> Replacing | None:
    path = evidence_path(env.layout, document.fingerprint)
    try:
        raw = read_regular_bytes(path)
    except (OSError, InputProblem):
        return None  # nothing there (or nothing readable: the write says what is in the way)
    past = summarise(raw, path)
    keeps_the_old = not document.complete and past.complete and past.usable
    continued = (
        not past.complete
        and past.corpus_sha256 == document.corpus.get("sha256")
        and past.method_hash == document.method.get("hash")
        and (past.steps or 0) <= len(document.steps)
    )
    return Replacing(raw, past, keeps_the_old, goes_to_history=not continued)

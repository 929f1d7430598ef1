"""Faults around the runner rather than in it: the calibration port already taken, and the state
directory's disk full while the evidence is written. Neither may damage a file on disk, and
the next run must work once the cause is gone."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from stress_support import (
    MICRO_WINDOW,
    OneSlotBaseline,
    assert_state_readable,
    cli_env,
    config_toml,
    micro_config,
    one_line_error,
    port_held,
    snapshot,
    temp_leftovers,
)

from vibey_gh.cli.main import cli
from vibey_gh.files import atomic_write_json
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.state import StateLayout

# Ignore SIGXFSZ so that a write past RLIMIT_FSIZE fails with EFBIG instead of killing Python.
LIMITED_CLI = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from vibey_gh.cli.main import cli
cli(sys.argv[2:], prog_name="vibey-gh")
"""


def _calibrate_args(baseline: OneSlotBaseline) -> list[str]:
    return [
        "slots",
        "calibrate",
        "--corpus",
        str(baseline.corpus_path),
        "--window",
        str(MICRO_WINDOW),
        "--slots",
        "1,2",
        "--max-tokens",
        "8",
    ]


def _state_files(layout: StateLayout) -> list[Path]:
    return sorted(p for p in layout.root.rglob("*") if p.is_file())


@pytest.mark.integration
def test_port_taken_is_bad_input_in_one_line_and_overwrites_nothing(
    one_slot_baseline: OneSlotBaseline, layout: StateLayout
) -> None:
    checkpoint = one_slot_baseline.install(layout)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    before = snapshot(_state_files(layout))
    with port_held(config.calibration_port):
        result = CliRunner().invoke(cli, _calibrate_args(one_slot_baseline))
    assert result.exit_code == 2, result.output
    line = one_line_error(result.stderr, alone=False)
    held = f"error: port {config.calibration_port} on 127.0.0.1 is already in use by pid "
    assert line.startswith(held + f"{os.getpid()} (")
    assert line.endswith("--port N, or [local_models] calibration_port)")
    assert snapshot(list(before)) == before, "no file was changed"
    assert checkpoint.exists()
    assert not (layout.root / "calibration-runner.json").exists(), "no runner was started"
    assert_state_readable(layout)


def _completed_checkpoint(baseline: OneSlotBaseline, layout: StateLayout) -> None:
    """A checkpoint holding both steps of the sweep, so calibrate only writes the evidence.
    The second step is the first one relabelled: what it measured does not matter here."""
    path = baseline.install(layout)
    data = json.loads(path.read_text())
    second = {**data["steps"][0], "index": 1, "slots": 2}
    data["steps"].append(second)
    atomic_write_json(path, data)


def _evidence_and_checkpoint(layout: StateLayout) -> tuple[Path, Path]:
    (evidence,) = layout.evidence.glob("*.json")
    (checkpoint,) = layout.progress.glob("*.json")
    return evidence, checkpoint


def _assert_untouched_after_failed_write(
    layout: StateLayout, before: dict[Path, bytes | None]
) -> None:
    assert snapshot(list(before)) == before, "the previous evidence and checkpoint are intact"
    assert temp_leftovers(layout.root) == [], "the failed write left no temporary file"
    evidence, _ = _evidence_and_checkpoint(layout)
    assert [s.slots for s in load_evidence(evidence).steps] == [1], "still the paused sweep"


def _assert_next_run_records(layout: StateLayout, baseline: OneSlotBaseline) -> None:
    result = CliRunner().invoke(cli, _calibrate_args(baseline))
    assert result.exit_code == 0, result.output
    (evidence,) = layout.evidence.glob("*.json")
    assert [s.slots for s in load_evidence(evidence).steps] == [1, 2]
    assert not list(layout.progress.glob("*.json")), "the finished sweep dropped its checkpoint"
    assert_state_readable(layout)


@pytest.mark.integration
def test_file_size_limit_while_evidence_is_written_keeps_the_previous_evidence(
    one_slot_baseline: OneSlotBaseline, isolated_state: Path
) -> None:
    layout = StateLayout(isolated_state)
    _completed_checkpoint(one_slot_baseline, layout)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    evidence, checkpoint = _evidence_and_checkpoint(layout)
    before = snapshot([evidence, evidence.with_suffix(".md"), checkpoint])
    # the new evidence (two steps) is larger than the checkpoint; nothing else written is
    limit = checkpoint.stat().st_size + 512
    with port_held(config.calibration_port):  # should anything try to start a runner
        failed = subprocess.run(
            [sys.executable, "-c", LIMITED_CLI, str(limit), *_calibrate_args(one_slot_baseline)],
            env=cli_env(isolated_state),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert failed.returncode == 1, failed.stderr
    said = one_line_error(failed.stderr, alone=False)
    assert said.startswith(f"error: File too large ({layout.root}"), said  # names the file
    _assert_untouched_after_failed_write(layout, before)
    _assert_next_run_records(layout, one_slot_baseline)


@contextlib.contextmanager
def tiny_tmpfs(folder: Path, size_kib: int) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def _fill(folder: Path, leave_bytes: int) -> Path:
    """Take all free space of the file system but `leave_bytes`."""
    filler = folder / "filler"
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with filler.open("wb") as handle:
        handle.write(b"\0" * max(free - leave_bytes, 0))
    return filler


@pytest.mark.integration
def test_disk_full_while_evidence_is_written_keeps_the_previous_evidence(
    one_slot_baseline: OneSlotBaseline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tiny_tmpfs(tmp_path / "small", size_kib=512) as disk:
        state = disk / "state"
        monkeypatch.setenv("VIBEY_GH_SLOTS_DIR", str(state))
        layout = StateLayout(state)
        _completed_checkpoint(one_slot_baseline, layout)
        config = micro_config()
        Path("vibey-gh.toml").write_text(config_toml(config))
        evidence, checkpoint = _evidence_and_checkpoint(layout)
        before = snapshot([evidence, evidence.with_suffix(".md"), checkpoint])
        filler = _fill(disk, leave_bytes=4096)
        with port_held(config.calibration_port):
            result = CliRunner().invoke(cli, _calibrate_args(one_slot_baseline))
        assert result.exit_code == 1, result.output
        said = one_line_error(result.stderr, alone=False)
        assert said.startswith(f"error: No space left on device ({state}"), said
        _assert_untouched_after_failed_write(layout, before)
        filler.unlink()
        _assert_next_run_records(layout, one_slot_baseline)

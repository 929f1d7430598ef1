"""The storm and its lanes on the real embedded llama.cpp runner as production (integration).

Tiny on purpose: window 2048, 16 output tokens, lanes over one small file each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from vibey_gh.composition import real_collaborators
from vibey_gh.config import load_config
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.lanes.records import FINISHED_STATUSES, iter_records, read_record
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.state import StateLayout
from vibey_gh.storm.calibration import CalibrationPlan
from vibey_gh.storm.queue import CLAIM_SUFFIX
from vibey_gh.storm.runner import run_storm
from vibey_gh.storm.setup import StormOptions, default_deps, storm_folder

pytestmark = pytest.mark.integration
WINDOW = 2048
MAX_TOKENS = 16


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRunner]:
    logs = tmp_path_factory.mktemp("production")
    launch = RunnerLaunch(
        slots=1,
        window=WINDOW,
        port=free_port(),
        model="default",
        log_path=logs / "production.log",
        threads=2,
    )
    runner = runner_for("embedded").start(launch)
    try:
        runner.wait_ready(300)
        yield runner
    finally:
        runner.stop()


def write_config(folder: Path, production: RunningRunner, concurrent_runs: str) -> None:
    (folder / "vibey-gh.toml").write_text(
        "[local_models]\n"
        f"concurrent_runs = {concurrent_runs}\n"
        'runner = "embedded"\n'
        f"window = {WINDOW}\n"
        f"max_tokens = {MAX_TOKENS}\n"
        f'production_url = "{production.base_url}"\n'
        f"calibration_port = {free_port()}\n"
        "min_step_seconds = 0.1\n",  # the idle calibration: one pass over its corpus per step
        encoding="utf-8",
    )


def make_queue(root: Path, count: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def one():\n    return 1\n", encoding="utf-8")
    pending = root / "queue" / "pending"
    pending.mkdir(parents=True)
    for index in range(count):
        (pending / f"lane{index}.toml").write_text(
            f'id = "lane{index}"\ntitle = "Lane {index}"\n'
            f'task = "In one sentence: what does one() in a.py return? ({index})"\n'
            f'repository = "../../repo"\nfiles = ["a.py"]\n',
            encoding="utf-8",
        )
    return root / "queue"


def test_measured_without_evidence_runs_one_at_a_time_then_calibrates(
    tmp_path: Path, layout: StateLayout, production: RunningRunner
) -> None:
    write_config(Path.cwd(), production, '"measured"')
    queue = make_queue(tmp_path, 4)
    said: list[str] = []
    options = StormOptions(
        queue=queue,
        once=True,
        poll_s=0.2,
        calibration=CalibrationPlan(
            slots=(1, 1),
            max_tokens=MAX_TOKENS,
            segments_per_stratum=1,
            segment_turns=1,
            min_lane_turns=4,
            threads=2,
        ),
    )
    summary = run_storm(options, default_deps(said.append))

    assert summary.answer().queue == {"pending": 0, "running": 0, "done": 4, "failed": 0}
    records = list(iter_records(storm_folder(layout, queue)))
    assert len(records) == 4 and all(r.status in FINISHED_STATUSES for r in records)
    spans = sorted((r.start["t"], r.end["t"]) for r in records if r.start and r.end)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))
    replies = [e for r in records for e in r.of_kind("reply")]
    assert all(isinstance(e["prompt_tokens"], int) and e["prompt_tokens"] > 0 for e in replies)

    log = summary.log.read_text(encoding="utf-8") if summary.log else ""
    assert "pass 1: allowed 1 — unmeasured: " in log
    assert any(line.startswith("pass 1: allowed 1 — unmeasured: ") for line in said)
    assert "calibration: corpus " in log and "from its own lane records" in log
    assert "calibration recorded: ideal 1" in log, log
    last_lane = max(log.rindex(f"lane{i}.toml (") for i in range(4))
    assert last_lane < log.index("calibrating")

    answer = real_collaborators().decide_allowed(load_config())
    assert answer.evidence is not None and "unmeasured" not in answer.reason
    assert answer.reason.startswith("measured: ")
    assert [s.slots for s in load_evidence(answer.evidence).steps] == [1, 1]
    after = log[log.index("calibration recorded") :]
    assert ": allowed 1 — measured: " in after


def lane_in_flight(running: Path, records_root: Path) -> str | None:
    """The run id of a claimed lane whose first request has been recorded, if any."""
    for claim in running.glob("*" + CLAIM_SUFFIX):
        try:
            run_id = json.loads(claim.read_text(encoding="utf-8"))["run_id"]
            events = (records_root / run_id / "events.jsonl").read_text(encoding="utf-8")
        except (OSError, ValueError, KeyError):
            continue
        if '"event":"turn"' in events:
            return str(run_id)
    return None


def claimed_specs(running: Path, run_id: str) -> dict[str, str]:
    """running/'s spec names claimed by the lane run `run_id`."""
    return {
        claim.name.removesuffix(CLAIM_SUFFIX): run_id
        for claim in running.glob("*" + CLAIM_SUFFIX)
        if json.loads(claim.read_text(encoding="utf-8"))["run_id"] == run_id
    }


def storm_command(queue: Path) -> list[str]:
    return [sys.executable, "-m", "vibey_gh.cli.main", "storm", "run", str(queue), "--once"]


def test_kill_9_mid_queue_loses_no_record_and_reruns_no_finished_lane(
    tmp_path: Path, isolated_state: Path, production: RunningRunner
) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    write_config(work, production, "1")
    queue = make_queue(tmp_path, 3)
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(isolated_state)}
    first = subprocess.Popen(storm_command(queue), cwd=work, env=env, stderr=subprocess.DEVNULL)
    done, running = queue / "done", queue / "running"
    records_root = storm_folder(StateLayout(isolated_state), queue)
    try:
        while not (list(done.glob("*.toml")) and lane_in_flight(running, records_root)):
            assert first.poll() is None, "the storm ended before it could be killed"
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    killed = lane_in_flight(running, records_root)
    assert killed is not None
    finished_before = {}
    if read_record(records_root / killed).end is not None:
        # It ended between the look and the kill, its spec still in running/: the rerun must
        # settle it as finished, never run it again.
        finished_before.update(claimed_specs(running, killed))
    for spec in done.glob("*.toml"):
        claim = json.loads((done / (spec.name + CLAIM_SUFFIX)).read_text(encoding="utf-8"))
        record = read_record(records_root / claim["run_id"])
        assert record.status in FINISHED_STATUSES and not record.torn_tail
        finished_before[spec.name] = claim["run_id"]
    assert finished_before

    rerun = subprocess.run(
        storm_command(queue), cwd=work, env=env, capture_output=True, text=True, timeout=600
    )
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(p.name for p in done.glob("*.toml")) == ["lane0.toml", "lane1.toml", "lane2.toml"]
    assert not list(running.iterdir()) and not list((queue / "pending").iterdir())
    finished: dict[str, list[str]] = {}
    for record in iter_records(records_root):
        if record.status in FINISHED_STATUSES and record.start:
            finished.setdefault(record.start["spec"]["id"], []).append(record.run_id)
    assert {spec: len(runs) for spec, runs in finished.items()} == {
        "lane0": 1,
        "lane1": 1,
        "lane2": 1,
    }, "a finished lane ran twice"
    for name, run_id in finished_before.items():
        assert finished[name.removesuffix(".toml")] == [run_id]


def test_lane_run_against_the_embedded_production(
    tmp_path: Path, isolated_state: Path, production: RunningRunner
) -> None:
    write_config(Path.cwd(), production, "1")
    queue = make_queue(tmp_path, 1)
    spec = queue / "pending" / "lane0.toml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vibey_gh.cli.main",
            "lane",
            "run",
            str(spec),
            "--max-turns",
            "2",
            "--json",
        ],
        cwd=Path.cwd(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    outcome = json.loads(result.stdout)
    assert result.returncode == (0 if outcome["status"] == "answered" else 1), result.stderr
    assert outcome["status"] in ("answered", "max_turns")
    record = read_record(Path(outcome["record"]))
    assert Path(outcome["record"]).is_relative_to(isolated_state / "lanes")
    assert record.of_kind("turn")[0]["payload"]["messages"][0]["role"] == "system"
    assert record.end is not None and record.end["turns"] == outcome["turns"] >= 1


def test_ctrl_c_stops_the_storm_with_a_consistent_queue(
    tmp_path: Path, isolated_state: Path, production: RunningRunner
) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    write_config(work, production, "1")
    queue = make_queue(tmp_path, 3)
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(isolated_state)}
    records_root = storm_folder(StateLayout(isolated_state), queue)
    storm = subprocess.Popen(
        storm_command(queue),
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while lane_in_flight(queue / "running", records_root) is None:
        assert storm.poll() is None, "the storm ended before it could be stopped"
        time.sleep(0.05)
    storm.send_signal(signal.SIGINT)
    out, err = storm.communicate(timeout=600)
    assert storm.returncode == 0, err
    assert "stopping: no new lanes" in err
    assert not list((queue / "running").iterdir())
    pending = sorted(p.name for p in (queue / "pending").glob("*.toml"))
    done = sorted(p.name for p in (queue / "done").glob("*.toml"))
    assert sorted(pending + done) == ["lane0.toml", "lane1.toml", "lane2.toml"]
    assert "lane2.toml" in pending, "no lane was claimed after the stop"
    statuses = {r.start["spec"]["id"]: r.status for r in iter_records(records_root) if r.start}
    assert statuses == {"lane0": statuses["lane0"]}
    assert statuses["lane0"] in ("answered", "interrupted")
    assert ("lane0.toml" in done) == (statuses["lane0"] == "answered")

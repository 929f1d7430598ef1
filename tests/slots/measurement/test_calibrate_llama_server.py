"""A short calibration on a real llama-server, without and then beside a production one
(integration; skipped where tools/install-llama-server.sh could not build llama-server)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.corpus import TINY_WINDOW
from tests.support.ports import free_port
from tests.support.progress import Quiet
from vibey_gh.composition import build_environment, real_collaborators
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.llamacpp.llama_server import LlamaServerRunner
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.state import StateLayout

LIVE = shutil.which("llama-server")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        LIVE is None, reason="no llama-server on PATH (tools/install-llama-server.sh builds one)"
    ),
]


def short_corpus(folder: Path) -> tuple[Corpus, Path]:
    """4 short turns: a step takes seconds on two busy cores."""
    transcripts = folder / "transcripts.jsonl"
    lines = []
    for index in range(4):
        messages = [
            {"role": "system", "content": "Answer in one short sentence."},
            {"role": "user", "content": f"What does add(2, {index}) return?"},
            {"role": "assistant", "content": f"It returns {2 + index}."},
            {"role": "user", "content": "And add(1, 1)?"},
            {"role": "assistant", "content": "It returns 2."},
        ]
        lines.append(json.dumps({"id": f"short-{index}", "messages": messages}) + "\n")
    transcripts.write_text("".join(lines))
    pool = build_pool(PoolSources(from_transcripts=[transcripts]))
    corpus = build_corpus(pool, window=TINY_WINDOW, segments_per_stratum=2, segment_turns=2)
    path = folder / "corpus.json"
    write_corpus(corpus, path)
    return corpus, path


@pytest.mark.timeout(600)
def test_production_down_then_up_and_a_calibration_beside_it(
    tmp_path: Path, layout: StateLayout
) -> None:
    assert LIVE is not None
    corpus, _ = short_corpus(tmp_path)
    production_port = free_port()
    config = LocalModels(
        concurrent_runs="measured",
        runner="llama-server",
        window=TINY_WINDOW,
        production_url=f"http://127.0.0.1:{production_port}",
        calibration_port=free_port(),
        runner_binary=LIVE,
        min_step_seconds=0.1,  # one pass over the short corpus per step
    )

    def calibrate(settings: LocalModels) -> CalibrationOutcome:
        request = CalibrationRequest(
            config=settings,
            corpus=corpus,
            window=TINY_WINDOW,
            max_tokens=8,
            slots=(1,),  # what is read is the fingerprint and where the evidence went
            threads=2,
        )
        return run_calibration(request, build_environment(settings, layout), Quiet())

    # production is not running: calibrate anyway, keyed to the binary's version
    absent = calibrate(config)
    assert absent.recorded and absent.production_absent and absent.evidence is not None
    evidence = json.loads(absent.evidence.read_text())
    assert "no answer from" in evidence["production_absent"]

    production = LlamaServerRunner().start(
        RunnerLaunch(1, TINY_WINDOW, production_port, "default", tmp_path / "prod.log", LIVE)
    )
    try:
        production.wait_ready(180)
        # the same build and model once production runs: the same fingerprint, so it counts
        answer = real_collaborators().decide_allowed(config)
        assert answer.fingerprint == absent.fingerprint
        assert answer.evidence == absent.evidence
        assert answer.production_slots == 1
        # production's own settings are part of the fingerprint: another one, measured beside it
        tuned = replace(config, runner_args=("-b", "64"))
        beside = calibrate(tuned)
    finally:
        production.stop()
    assert beside.recorded and beside.production_absent is None
    assert beside.version_mismatch is None
    assert beside.fingerprint != absent.fingerprint
    assert beside.evidence is not None
    tuned_evidence = json.loads(beside.evidence.read_text())
    assert tuned_evidence["fingerprint"]["fields"]["runner_settings"] == {"runner_args": "-b 64"}
    assert (
        tuned_evidence["production_version"] == evidence["fingerprint"]["fields"]["runner_version"]
    )


OTHER_BUILD = """
import os, sys
if "--version" in sys.argv[1:]:
    print("version: 0.6.0-dev (build 99999, commit other)")
    sys.exit(0)
os.execv({real!r}, [{real!r}, *sys.argv[1:]])
"""


@pytest.mark.timeout(600)
def test_another_calibration_version_is_refused_up_front_or_kept_to_out(
    tmp_path: Path, isolated_state: Path
) -> None:
    assert LIVE is not None
    from click.testing import CliRunner

    from vibey_gh.cli.main import cli

    _, corpus_path = short_corpus(tmp_path)
    other = tmp_path / "bin" / "llama-server"
    other.parent.mkdir()
    other.write_text(f"#!{sys.executable}\n" + OTHER_BUILD.format(real=LIVE))
    other.chmod(0o755)
    production_port = free_port()
    Path("vibey-gh.toml").write_text(
        "[local_models]\n"
        'runner = "llama-server"\n'
        f"window = {TINY_WINDOW}\n"
        f'production_url = "http://127.0.0.1:{production_port}"\n'
        f"calibration_port = {free_port()}\n"
        f'runner_binary = "{other}"\n'
        "min_step_seconds = 0.1\n"
    )
    args = ["slots", "calibrate", "--corpus", str(corpus_path), "--slots", "1"]
    args += ["--max-tokens", "8", "--threads", "2"]
    production = LlamaServerRunner().start(
        RunnerLaunch(1, TINY_WINDOW, production_port, "default", tmp_path / "prod.log", LIVE)
    )
    try:
        production.wait_ready(180)
        refused = CliRunner().invoke(cli, args)
        kept = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "out")])
    finally:
        production.stop()
    assert refused.exit_code == 1
    assert refused.stderr.startswith(
        "error: the calibration llama-server is version b99999-other, production's is b"
    )
    assert refused.stderr.count("\n") == 1
    assert kept.exit_code == 0, kept.output
    said = f"the evidence goes to {tmp_path / 'out'} only"
    # said at the start (progress lines go to stderr) and again at the end
    end = "NOT RECORDED as this device's evidence: the calibration llama-server is version"
    assert said in kept.stderr and end in kept.stderr
    assert kept.stderr.index(said) < kept.stderr.index("step 0") < kept.stderr.index(end)
    assert list((tmp_path / "out").glob("slots-*.json"))
    assert not list((isolated_state / "evidence").glob("*.json"))

"""The composition root: parts built on first use, a replaced part seen by every part built from
it, and the CLI taking its parts from the root group alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tests.support.clocks import ManualClock
from vibey_gh.cli.main import cli
from vibey_gh.composition import real_collaborators
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.state import StateLayout
from vibey_gh.storm.setup import default_deps

DEVICE = DeviceFacts(None, "AMD EPYC", 25_276_510_208, (), "Debian GNU/Linux", "12")
RUNNER = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "sha256:17052f91a42e")


def test_building_the_collaborators_imports_nothing_they_may_not_need() -> None:
    # a declared 1 answers without probing, identifying or reading evidence: a fresh process
    # shows which modules building the parts and answering loaded (the state layout's module is
    # not asked after: the command line's config lookup loads it on every answer anyway)
    script = (
        "import sys\n"
        "from vibey_gh.composition import real_collaborators\n"
        "from vibey_gh.config import LocalModels\n"
        "parts = real_collaborators()\n"
        "print(parts.decide_allowed(LocalModels(concurrent_runs=1)).line())\n"
        "heavy = ['vibey_gh.platforms.device.probes', 'vibey_gh.runners.llamacpp.identify', "
        "'vibey_gh.slots.measurement.calibration_setup', 'vibey_gh.lanes.client', "
        "'vibey_gh.slots.evidence.store', 'vibey_gh.slots.gate.measured']\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    answer, loaded = done.stdout.splitlines()
    assert answer == "1 — declared 1 (concurrent_runs = 1)"
    assert loaded == "[]"


def test_a_replaced_part_is_the_one_the_parts_built_from_it_use(tmp_path: Path) -> None:
    identified: list[str] = []

    def identify(config: LocalModels) -> RunnerInfo:
        identified.append(config.model)
        return RUNNER

    parts = real_collaborators(
        layout=lambda: StateLayout(tmp_path),
        clock=ManualClock(epoch=1_796_009_900.0),
        device=lambda: DEVICE,
        identify_production=identify,
    )
    config = LocalModels(runner="ollama", model="gpt-oss:20b", concurrent_runs="measured")
    answer = parts.decide_allowed(config)
    assert answer.fingerprint == compute_fingerprint(DEVICE, RUNNER, config.window).id
    assert (answer.allowed, answer.reason_code, answer.requested) == (1, "unmeasured", True)
    assert answer.request is not None and answer.request.is_relative_to(tmp_path)
    assert identified == ["gpt-oss:20b"]
    assert parts.allowed_deps().layout.root == tmp_path


def test_the_device_comes_from_the_probes_given(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal:       16384 kB\n")
    probes = PlatformProbes.detect("linux", tmp_path, CannedCommandRunner())
    parts = real_collaborators(probes=lambda: probes)
    assert parts.probes() is probes
    assert parts.device().memory_bytes == 16384 * 1024


def test_the_platform_given_is_the_one_allowed_answers_for() -> None:
    answer = real_collaborators(platform="win32").answer_allowed(None, None)
    assert (answer.allowed, answer.reason_code) == (1, "unsupported_platform")


def test_the_cli_reads_no_test_only_keys_from_its_context(isolated_state: Path) -> None:
    Path("vibey-gh.toml").write_text("[local_models]\nconcurrent_runs = 1\n")
    # the old dictionary of stand-ins is not an override point: the parts stay real
    ignored = CliRunner().invoke(cli, ["slots", "allowed", "--json"], obj={"platform": "win32"})
    assert json.loads(ignored.output)["reason_code"] == "declared"
    given = CliRunner().invoke(
        cli, ["slots", "allowed", "--json"], obj=real_collaborators(platform="win32")
    )
    assert json.loads(given.output)["reason_code"] == "unsupported_platform"


def test_the_storm_takes_its_world_from_the_collaborators(tmp_path: Path) -> None:
    clock = ManualClock(epoch=1_796_009_900.0)
    parts = real_collaborators(layout=lambda: StateLayout(tmp_path), clock=clock, platform="win32")
    deps = default_deps(print, parts)
    assert deps.layout.root == tmp_path and deps.clock is clock
    assert deps.decide(LocalModels(concurrent_runs=4)).reason_code == "unsupported_platform"

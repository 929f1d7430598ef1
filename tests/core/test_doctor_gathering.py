"""What doctor gathers, as a library call: facts, identity, fingerprint, drift, and why one is
missing. The command's output is tested in tests/cli/test_doctor.py."""

from __future__ import annotations

from pathlib import Path

from vibey_gh.config import LocalModels
from vibey_gh.doctor import config_in_use, gather
from vibey_gh.errors import RunnerError
from vibey_gh.interfaces.slots_interface import RunnerInfo
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint

RUNNER = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "sha256:17052f91a42e")


def probes_on(root: Path) -> PlatformProbes:
    (root / "proc").mkdir(parents=True)
    (root / "proc/meminfo").write_text("MemTotal:       16384 kB\nMemAvailable:    8192 kB\n")
    return PlatformProbes.detect("linux", root, CannedCommandRunner())


def test_an_identified_runner_gives_the_fingerprint_and_the_drift(tmp_path: Path) -> None:
    config = LocalModels(runner="ollama", model="gpt-oss:20b", window=8192)
    report = gather(
        config, probes_on(tmp_path), lambda c: RUNNER, lambda c: [f"window is {c.window}"]
    )
    assert report.platform == "linux"
    assert report.device.memory_bytes == 16384 * 1024
    assert report.fingerprint == compute_fingerprint(report.device, RUNNER, 8192)
    assert (report.runner_error, report.fingerprint_missing) == (None, None)
    assert report.drift == ("window is 8192",)
    assert report.output().differs_from_config == ("window is 8192",)


def test_a_runner_that_does_not_answer_is_the_reason_there_is_no_fingerprint(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    def unreachable(config: LocalModels) -> RunnerInfo:
        raise RunnerError("production runner at http://127.0.0.1:11434 does not answer")

    def drift(config: LocalModels) -> list[str]:
        asked.append(config.model)
        return ["never shown"]

    report = gather(LocalModels(), probes_on(tmp_path), unreachable, drift)
    assert report.runner is None and report.fingerprint is None
    assert report.fingerprint_missing == (
        "the production runner could not be identified: "
        "production runner at http://127.0.0.1:11434 does not answer"
    )
    assert report.drift == () and asked == []  # nothing to compare with


def test_the_config_in_use_is_named_or_where_one_was_looked_for(tmp_path: Path) -> None:
    assert config_in_use(LocalModels(source=tmp_path / "lab.toml")) == str(tmp_path / "lab.toml")
    assert config_in_use(LocalModels()).startswith("none found, defaults in use (looked for")

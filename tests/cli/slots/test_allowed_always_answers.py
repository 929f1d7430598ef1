"""The gate always answers: whatever sits where a cache or an output goes, `slots allowed`,
`allowed --json` and `doctor` print their answer and exit 0; what they could not read or write
is a warning on stderr. And a cache edited by hand never outvotes the config file."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support.clocks import ManualClock
from tests.support.evidence import RECORDED, RECORDED_FINGERPRINT
from vibey_gh.config_cache import cache_file_for
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.figures_cache import figures_path
from vibey_gh.slots.evidence.requests import request_path
from vibey_gh.state import StateLayout

FP = RECORDED_FINGERPRINT
# two days after the recorded sweep, on the device and runner it ran on
NOW = 1_796_009_900.0 + 2 * 86_400.0
DEVICE = DeviceFacts(None, "AMD EPYC", 25_276_510_208, (), "Debian GNU/Linux", "12")
RUNNER = RunnerInfo(
    "embedded",
    "xllamacpp 2026.10.11549",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)
MEASURED = '[local_models]\nconcurrent_runs = "measured"\n'

Gate = Callable[..., Result]


@pytest.fixture
def gate(run_cli: Gate, isolated_state: Path) -> Gate:
    """`vibey-gh ARGS` on the recorded device and runner, with the config in the cwd."""
    Path("vibey-gh.toml").write_text(MEASURED)
    assert StateLayout(isolated_state).cache.is_dir()  # as a calibration leaves it

    def run(*args: str) -> Result:
        return run_cli(
            list(args),
            layout=lambda: StateLayout(isolated_state),
            clock=ManualClock(epoch=NOW),
            device=lambda: DEVICE,
            identify_production=lambda _config: RUNNER,
        )

    return run


def with_evidence(state: Path) -> None:
    shutil.copyfile(RECORDED, StateLayout(state).evidence / f"{FP}.json")


def config_cache(state: Path) -> Path:
    return cache_file_for(Path("vibey-gh.toml"), {"VIBEY_GH_SLOTS_DIR": str(state)})


def put(kind: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    if kind == "FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()


WHERE: dict[str, Callable[[Path], Path]] = {
    "config cache": config_cache,
    "figures cache": lambda state: figures_path(StateLayout(state), FP),
    "calibration request": lambda state: request_path(StateLayout(state), FP),
    "cache folder": lambda state: state / "cache",
    "requests folder": lambda state: state / "requests",
}


def assert_answers(result: Result, *, as_json: bool = False) -> int:
    assert result.exit_code == 0, (result.output, result.stderr)
    stdout = result.stdout
    allowed = json.loads(stdout)["allowed"] if as_json else int(stdout.split(" ")[0])
    assert allowed >= 1
    assert all(line.startswith("warning: ") for line in result.stderr.splitlines())
    return int(allowed)


@pytest.mark.parametrize("kind", ["FIFO", "folder"])
@pytest.mark.parametrize("where", sorted(WHERE))
def test_something_in_a_caches_place_never_stops_the_answer(
    gate: Gate, isolated_state: Path, where: str, kind: str
) -> None:
    if where not in ("calibration request", "requests folder"):
        with_evidence(isolated_state)
    assert_answers(gate("slots", "allowed"))  # caches written, as on any first call
    target = WHERE[where](isolated_state)
    put(kind, target)
    expected = 1 if where in ("calibration request", "requests folder") else None
    plain = assert_answers(gate("slots", "allowed"))
    as_json = assert_answers(gate("slots", "allowed", "--json"), as_json=True)
    assert plain == as_json and (expected is None or plain == expected)
    doctor = gate("doctor")
    assert doctor.exit_code == 0, (doctor.output, doctor.stderr)
    assert "fingerprint: " in doctor.stdout
    assert os.path.isdir(target) == (kind == "folder")  # left as it was
    if where in ("config cache", "figures cache"):
        assert f"warning: cache {target}" in gate("slots", "allowed").stderr


def test_the_answer_from_evidence_is_the_same_with_a_cache_in_the_way(
    gate: Gate, isolated_state: Path
) -> None:
    with_evidence(isolated_state)
    clean = gate("slots", "allowed", "--json")
    for where in ("config cache", "figures cache"):
        put("FIFO", WHERE[where](isolated_state))
    blocked = gate("slots", "allowed", "--json")
    assert json.loads(blocked.stdout)["allowed"] == json.loads(clean.stdout)["allowed"]
    assert json.loads(blocked.stdout)["reason"] == json.loads(clean.stdout)["reason"]


@pytest.mark.parametrize("target", ["/proc/x.prom", "/dev/full", "FIFO", "folder", "no/such/x"])
def test_a_textfile_that_cannot_be_written_is_a_warning_and_the_answer_is_printed(
    gate: Gate, tmp_path: Path, target: str
) -> None:
    if target in ("FIFO", "folder"):
        put(target, tmp_path / "gauges.prom")
        target = str(tmp_path / "gauges.prom")
    result = gate("slots", "allowed", "--textfile", target)
    assert result.exit_code == 0, (result.output, result.stderr)
    assert int(result.stdout.split(" ")[0]) == 1
    (warning,) = result.stderr.splitlines()
    assert warning.startswith(f"warning: --textfile {target} was not written (")
    assert warning.endswith("the answer is unaffected")


def test_an_edited_config_cache_never_outvotes_the_config_file(
    gate: Gate, isolated_state: Path
) -> None:
    with_evidence(isolated_state)
    honest = json.loads(gate("slots", "allowed", "--json").stdout)
    assert honest["declaration"] == "measured"
    cache = config_cache(isolated_state)
    kept: dict[str, Any] = json.loads(cache.read_text())
    kept["toml"]["local_models"] = {"concurrent_runs": 5, "bounds": {"min_gain": 0.0}}
    cache.write_text(json.dumps(kept))
    edited = json.loads(gate("slots", "allowed", "--json").stdout)
    assert edited["declaration"] == "measured"
    assert (edited["allowed"], edited["reason"]) == (honest["allowed"], honest["reason"])

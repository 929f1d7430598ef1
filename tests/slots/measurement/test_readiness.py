"""What doctor checks for a calibration: each piece calibrate needs, in the way it would fail,
with what to do about it."""

from __future__ import annotations

import socket
from pathlib import Path

from msgspec.structs import replace

from tests.support.progress import Quiet
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.config import LocalModels
from vibey_gh.errors import RunnerNotFound
from vibey_gh.interfaces.slots_interface import ProductionState, RunnerInfo
from vibey_gh.runners.process import ensure_port_free
from vibey_gh.slots.measurement.readiness import (
    FAIL,
    OK,
    WARN,
    Check,
    ReadinessParts,
    calibration_checks,
)
from vibey_gh.state import StateLayout

PRODUCTION = RunnerInfo("llama-server", "b4747-2d219b38", "/m.gguf", "ab" * 32, serving_slots=2)


def parts(
    *,
    production: RunnerInfo | None = PRODUCTION,
    version: str | None = "b4747-2d219b38",
    missing_binary: bool = False,
    busy: bool = False,
) -> ReadinessParts:
    def calibration_version(config: LocalModels) -> tuple[str, str | None]:
        if missing_binary:
            raise RunnerNotFound("llama-server is not on PATH; install it or set runner_binary")
        return "/opt/llama-server", version

    return ReadinessParts(
        production=production,
        production_error=None if production else "no answer from http://127.0.0.1:8080/props",
        calibration_version=calibration_version,
        port_free=lambda port, advice: ensure_port_free(port, what_to_do=advice),
        poll_production=lambda c: ProductionState(True, busy, ("qwen3",) if busy else ()),
    )


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks if check.name != "checkpoint"}


def llama_config(tmp_path: Path, port: int) -> LocalModels:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return LocalModels(runner="llama-server", model=str(model), calibration_port=port)


def test_everything_in_place_is_ready(tmp_path: Path, layout: StateLayout) -> None:
    from tests.support.ports import free_port

    checks = by_name(calibration_checks(llama_config(tmp_path, free_port()), layout, parts(), None))
    assert {name: c.status for name, c in checks.items()} == {
        "calibration runner": OK,
        "model": OK,
        "calibration port": OK,
        "state folder": OK,
        "production": OK,
    }
    assert checks["production"].detail == "llama-server b4747-2d219b38, serving 2 slot(s)"


def test_each_missing_piece_is_a_failure_with_what_to_do(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = replace(
        llama_config(tmp_path, 0), model=str(tmp_path / "absent.gguf"), calibration_port=1
    )
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        config = replace(config, calibration_port=listener.getsockname()[1])
        found = calibration_checks(config, layout, parts(missing_binary=True), None)
    checks = by_name(found)
    assert checks["calibration runner"].status == FAIL
    assert checks["calibration runner"].todo is not None
    assert "runner_binary" in checks["calibration runner"].todo
    assert checks["model"].status == FAIL and "absent.gguf" in checks["model"].detail
    port = checks["calibration port"]
    assert port.status == FAIL and "already in use by pid" in port.detail
    assert port.todo is not None and "--port N" in port.todo


def test_a_binary_that_names_no_version_fails(tmp_path: Path, layout: StateLayout) -> None:
    from tests.support.ports import free_port

    config = llama_config(tmp_path, free_port())
    checks = by_name(calibration_checks(config, layout, parts(version=None), None))
    assert checks["calibration runner"].status == FAIL
    assert checks["calibration runner"].detail == (
        "`/opt/llama-server --version` names no llama-server version"
    )


def test_another_version_than_production_fails(tmp_path: Path, layout: StateLayout) -> None:
    from tests.support.ports import free_port

    config = llama_config(tmp_path, free_port())
    checks = by_name(calibration_checks(config, layout, parts(version="b5000-aaaa"), None))
    assert checks["calibration runner"].status == FAIL
    assert "production's is b4747-2d219b38" in checks["calibration runner"].detail


def test_a_busy_production_and_unknown_parallelism_are_warnings(
    tmp_path: Path, layout: StateLayout
) -> None:
    from tests.support.ports import free_port

    config = llama_config(tmp_path, free_port())
    busy = by_name(calibration_checks(config, layout, parts(busy=True), None))["production"]
    assert busy.status == WARN and busy.detail.endswith("holds qwen3 now")
    assert busy.todo is not None and "--wait-idle" in busy.todo
    unknown = replace(PRODUCTION, serving_slots=None)
    checks = by_name(calibration_checks(config, layout, parts(production=unknown), None))
    assert checks["production"].status == WARN
    assert "serving slots unknown" in checks["production"].detail


def test_ollama_without_the_model_pulled_says_ollama_pull(
    tmp_path: Path, layout: StateLayout
) -> None:
    from tests.support.ports import free_port

    config = LocalModels(runner="ollama", model="qwen3:8b", calibration_port=free_port())
    not_pulled = RunnerInfo("ollama", "0.34.4", "qwen3:8b", None)
    checks = by_name(calibration_checks(config, layout, parts(production=not_pulled), None))
    assert checks["model"].status == FAIL
    assert checks["model"].todo == "ollama pull qwen3:8b"


def test_checkpoints_are_listed_and_another_fingerprints_are_orphaned(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = simulated_config(min_step_seconds=0.2, max_step_seconds=2.0)
    _, paused = calibrate(tmp_path, layout, config, Quiet(), max_runs=1)
    mine = [c for c in calibration_checks(config, layout, parts(), paused.fingerprint)]
    (resumable,) = [c for c in mine if c.name == "checkpoint"]
    assert resumable.status == OK and "1 step(s)" in resumable.detail
    assert resumable.detail.endswith("the same calibrate command resumes it")
    other = calibration_checks(config, layout, parts(), "0" * 16)
    (orphan,) = [c for c in other if c.name == "checkpoint"]
    assert orphan.status == WARN and "orphaned" in orphan.detail
    assert orphan.todo == "vibey-gh slots forget --checkpoints"

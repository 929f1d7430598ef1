"""`slots apply` restores what the evidence was measured with: llama-server's runner_args in
the restart command, Ollama's capacity variables beside the slots and the window; and refuses
what it cannot restore."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from tests.support.evidence import write_evidence_file
from tests.support.slot_builders import make_step, same_answers
from vibey_gh.config import LocalModels
from vibey_gh.errors import Refused
from vibey_gh.interfaces.identity import DeviceFacts, RunnerInfo
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.gate.apply import describe_plan, plan_apply

DEVICE = DeviceFacts("Mac17,2", "Apple M5", 24 << 30, (), "macOS", "26.6.2")
RUNNER_ARGS = "-ngl 99 -fa on --cache-type-k q8_0"
WINDOW = 8192


@dataclass
class EvidenceAnswer:
    """An allowed answer resting on the evidence at `evidence`."""

    allowed: int
    evidence: Path

    def line(self) -> str:
        return f"{self.allowed} — measured"

    def to_json(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "evidence": str(self.evidence)}


def evidence_with(tmp_path: Path, kind: str, settings: dict[str, str], window: int) -> Path:
    runner = RunnerInfo(kind, "1.0", "m", "sha256:abc", settings=settings)
    fingerprint = compute_fingerprint(DEVICE, runner, window)
    path = tmp_path / f"{fingerprint.id}.json"
    steps = [make_step(0, 1, same_answers()), make_step(1, 1, same_answers())]
    write_evidence_file(path, fingerprint, steps, 1_900_000_000.0)
    return path


def probes(root: Path, platform: str = "linux") -> PlatformProbes:
    (root / "run/systemd/system").mkdir(parents=True, exist_ok=True)  # systemd is init here
    return PlatformProbes.detect(platform, root, CannedCommandRunner())


def nothing_read(names: tuple[str, ...]) -> tuple[dict[str, str], str, str | None]:
    return {}, "", "no service found"


def test_llama_server_restarts_with_the_runner_args_it_was_measured_with(tmp_path: Path) -> None:
    evidence = evidence_with(tmp_path, "llama-server", {"runner_args": RUNNER_ARGS}, WINDOW)
    config = LocalModels(
        runner="llama-server", window=WINDOW, runner_args=tuple(RUNNER_ARGS.split())
    )
    plan, _ = plan_apply(config, probes(tmp_path), decide=lambda c: EvidenceAnswer(2, evidence))
    command = describe_plan(plan)[-1]
    assert command.endswith(f"-np 2 -c {2 * WINDOW} --host 127.0.0.1 --port 8080 {RUNNER_ARGS}")


def test_the_restart_command_carries_the_evidence_s_args_not_the_config_s(
    tmp_path: Path,
) -> None:
    evidence = evidence_with(tmp_path, "llama-server", {"runner_args": RUNNER_ARGS}, WINDOW)
    config = LocalModels(runner="llama-server", window=WINDOW)  # the args left out since
    plan, _ = plan_apply(config, probes(tmp_path), decide=lambda c: EvidenceAnswer(2, evidence))
    assert describe_plan(plan)[-1].endswith(RUNNER_ARGS)


def test_without_evidence_the_config_s_args_are_restored(tmp_path: Path) -> None:
    config = LocalModels(
        runner="llama-server", window=WINDOW, runner_args=tuple(RUNNER_ARGS.split())
    )
    plan, _ = plan_apply(config, probes(tmp_path), slots=1)
    assert describe_plan(plan)[-1].endswith(RUNNER_ARGS)


def test_ollama_gets_the_variables_it_was_measured_with(tmp_path: Path) -> None:
    measured = {"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q8_0"}
    evidence = evidence_with(tmp_path, "ollama", measured, WINDOW)
    config = LocalModels(runner="ollama", window=WINDOW, runner_env=measured)
    plan, _ = plan_apply(
        config,
        probes(tmp_path),
        decide=lambda c: EvidenceAnswer(2, evidence),
        read_environment=nothing_read,
    )
    drop_in = plan.actions[0].content or ""
    assert 'Environment="OLLAMA_NUM_PARALLEL=2"' in drop_in
    assert f'Environment="OLLAMA_CONTEXT_LENGTH={WINDOW}"' in drop_in
    assert 'Environment="OLLAMA_FLASH_ATTENTION=1"' in drop_in
    assert 'Environment="OLLAMA_KV_CACHE_TYPE=q8_0"' in drop_in
    mac, _ = plan_apply(
        config,
        probes(tmp_path, "darwin"),
        decide=lambda c: EvidenceAnswer(2, evidence),
        read_environment=nothing_read,
    )
    assert ("launchctl", "setenv", "OLLAMA_KV_CACHE_TYPE", "q8_0") in [a.argv for a in mac.actions]


def test_a_production_variable_the_evidence_lacks_is_refused(tmp_path: Path) -> None:
    evidence = evidence_with(tmp_path, "ollama", {"OLLAMA_FLASH_ATTENTION": "1"}, WINDOW)
    config = LocalModels(runner="ollama", window=WINDOW, runner_env={"OLLAMA_FLASH_ATTENTION": "1"})

    def production_env(names: tuple[str, ...]) -> tuple[dict[str, str], str, str | None]:
        return (
            {"OLLAMA_FLASH_ATTENTION": "1", "OLLAMA_KV_CACHE_TYPE": "q4_0"},
            "ollama.service",
            None,
        )

    with pytest.raises(Refused, match="production runs with OLLAMA_KV_CACHE_TYPE=q4_0"):
        plan_apply(
            config,
            probes(tmp_path),
            decide=lambda c: EvidenceAnswer(2, evidence),
            read_environment=production_env,
        )


def test_evidence_of_another_window_is_refused(tmp_path: Path) -> None:
    evidence = evidence_with(tmp_path, "llama-server", {}, WINDOW * 2)
    config = replace(LocalModels(runner="llama-server"), window=WINDOW)
    with pytest.raises(Refused, match=f"measured with a window of {WINDOW * 2}, not {WINDOW}"):
        plan_apply(config, probes(tmp_path), decide=lambda c: EvidenceAnswer(2, evidence))

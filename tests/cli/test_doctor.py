"""`vibey-gh doctor`: every fact with its source or reason, the runner, the fingerprint."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from vibey_gh.config import LocalModels
from vibey_gh.errors import RunnerError
from vibey_gh.interfaces.slots_interface import RunnerInfo
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.nvidia import NvmlGpus
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "platforms"
SERVER_FILES = {
    "proc/meminfo": "linux_proc_meminfo_swap.txt",
    "proc/vmstat": "linux_vmstat_swapping.txt",
    "proc/cpuinfo": "linux_cpuinfo_x86.txt",
    "etc/os-release": "linux_os_release_ubuntu2604.txt",
    "sys/fs/cgroup/memory.max": "linux_cgroup2_memory.max_8Gi.txt",
    "sys/fs/cgroup/memory.current": "linux_cgroup2_memory.current.txt",
}
RUNNER = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "sha256:17052f91a42e")


def no_pynvml() -> Any:
    raise ImportError("no pynvml here")


def server_without_dmi(root: Path) -> PlatformProbes:
    for name, fixture in SERVER_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text((FIXTURES / fixture).read_text())
    return PlatformProbes.detect("linux", root, CannedCommandRunner(), NvmlGpus(importer=no_pynvml))


DoctorCli = Callable[..., Result]


@pytest.fixture
def doctor(run_cli: DoctorCli) -> DoctorCli:
    """`vibey-gh ARGS doctor ...` (global options first) on the given probes; the rest real."""

    def run(args: list[str], probes: PlatformProbes | None = None, **parts: Any) -> Result:
        if probes is not None:
            parts["probes"] = lambda: probes
        return run_cli(["doctor", *args], **parts)

    return run


def test_every_field_has_a_source_or_a_reason(tmp_path: Path, doctor: DoctorCli) -> None:
    probes = server_without_dmi(tmp_path)
    result = doctor(["--json"], probes=probes, identify_production=lambda c: RUNNER)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    device = data["device"]
    assert set(device) == {
        "hardware_model",
        "processor",
        "memory_bytes",
        "memory_limit_bytes",
        "accelerators",
        "os_name",
        "os_version",
    }
    for name, entry in device.items():
        has_value = entry["value"] not in (None, [])
        assert (entry["source"] is not None) == has_value, name
        assert (entry["missing"] is not None) == (not has_value), name
    assert device["hardware_model"]["missing"].startswith("no DMI on this machine")
    assert device["memory_limit_bytes"] == {
        "value": 8 << 30,
        "source": "/sys/fs/cgroup/memory.max (cgroup v2)",
        "missing": None,
    }
    assert "nvidia-smi not found" in device["accelerators"]["missing"]
    assert data["swap"]["total_bytes"] == 8388604 * 1024
    assert data["memory_now"]["wired_bytes"] == 3 << 30


def test_fingerprint_is_the_library_one(tmp_path: Path, doctor: DoctorCli) -> None:
    probes = server_without_dmi(tmp_path)
    result = doctor(
        ["--json", "--window", "32768"],
        probes=probes,
        identify_production=lambda c: RUNNER,
    )
    data = json.loads(result.output)
    expected = compute_fingerprint(probes.device.describe(), RUNNER, 32768)
    assert data["fingerprint"] == {"id": expected.id, "fields": expected.fields}
    assert data["fingerprint"]["fields"]["window"] == 32768
    assert data["runner"]["version"] == "0.34.4"
    assert data["fingerprint_missing"] is None


def test_model_override_reaches_identification(tmp_path: Path, doctor: DoctorCli) -> None:
    asked: list[LocalModels] = []

    def identify(config: LocalModels) -> RunnerInfo:
        asked.append(config)
        return RUNNER

    doctor(
        ["--model", "qwen3:8b"],
        probes=server_without_dmi(tmp_path),
        identify_production=identify,
    )
    assert asked[0].model == "qwen3:8b"


def test_text_report_names_sources_and_reasons(tmp_path: Path, doctor: DoctorCli) -> None:
    probes = server_without_dmi(tmp_path)
    result = doctor([], probes=probes, identify_production=lambda c: RUNNER)
    assert result.exit_code == 0, result.output
    text = result.output
    assert re.search(
        r"processor +AMD EPYC 9454 48-Core Processor +\[/proc/cpuinfo model name\]", text
    )
    assert re.search(r"hardware model +unknown +\[no DMI on this machine", text)
    assert re.search(r"memory limit +8\.0 GiB +\[/sys/fs/cgroup/memory\.max \(cgroup v2\)\]", text)
    assert re.search(r"swap +2\.0 GiB of 8\.0 GiB", text)
    expected = compute_fingerprint(probes.device.describe(), RUNNER, 4096).id
    assert f"fingerprint: {expected}" in text


def test_runner_that_does_not_answer_still_reports_the_device(
    tmp_path: Path, doctor: DoctorCli
) -> None:
    def unreachable(config: LocalModels) -> RunnerInfo:
        raise RunnerError("no answer from http://127.0.0.1:11434/api/version: connection refused")

    probes = server_without_dmi(tmp_path)
    result = doctor([], probes=probes, identify_production=unreachable)
    assert result.exit_code == 0
    assert "AMD EPYC 9454" in result.output
    assert (
        "fingerprint: none — the production runner could not be identified: "
        "no answer from http://127.0.0.1:11434/api/version: connection refused"
    ) in result.output
    data = json.loads(doctor(["--json"], probes=probes, identify_production=unreachable).output)
    assert data["fingerprint"] is None and data["runner"] is None
    assert "connection refused" in data["runner_error"]


def test_unsupported_platform_reports_why(tmp_path: Path, doctor: DoctorCli) -> None:
    probes = PlatformProbes.detect("win32", tmp_path, CannedCommandRunner())
    result = doctor(["--json"], probes=probes, identify_production=lambda c: RUNNER)
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["platform"] == "win32"
    assert data["device"]["processor"]["missing"] == "unsupported platform: win32"
    assert data["memory_now"]["missing"]["wired_bytes"] == "unsupported platform: win32"


def test_this_machine_with_the_real_embedded_runner(doctor: DoctorCli) -> None:
    # the default config: the embedded runner and the shipped model, identified for real
    result = doctor(["--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["runner"]["kind"] == "embedded"
    assert re.fullmatch(r"[0-9a-f]{64}", data["runner"]["model_digest"])
    assert re.fullmatch(r"[0-9a-f]{16}", data["fingerprint"]["id"])
    assert data["fingerprint"]["fields"]["model_digest"] == data["runner"]["model_digest"]
    assert data["device"]["memory_bytes"]["value"] > 0


def test_bad_config_exits_2(doctor: DoctorCli) -> None:
    Path("vibey-gh.toml").write_text("[local_models]\nwindow = 12\n")
    result = doctor([])
    assert result.exit_code == 2
    assert "local_models.window" in result.output


def test_help_has_examples(doctor: DoctorCli) -> None:
    result = doctor(["--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output and "vibey-gh doctor --json" in result.output


def test_the_text_report_names_the_config_file_in_use(
    tmp_path: Path, doctor: DoctorCli, run_cli: DoctorCli
) -> None:
    probes = server_without_dmi(tmp_path)
    defaults = doctor([], probes=probes, identify_production=lambda c: RUNNER)
    assert defaults.exit_code == 0, defaults.output
    assert defaults.output.startswith("config: none found, defaults in use (looked for --config")
    chosen = tmp_path / "lab.toml"
    chosen.write_text("[local_models]\nwindow = 8192\n")
    Path("vibey-gh.toml").write_text("[local_models]\nwindow = 16384\n")
    result = run_cli(
        ["--config", str(chosen), "doctor"],
        probes=lambda: probes,
        identify_production=lambda c: RUNNER,
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"config: {chosen}\n")
    assert re.search(r"window +8192", result.output)  # the named file won over ./vibey-gh.toml


def test_production_settings_and_where_production_differs_from_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doctor: DoctorCli
) -> None:
    from tests.support.runners import recorded, serve_recorded

    props = recorded("llama_server/props.json")  # 2 slots of 1024, SmolLM2
    with serve_recorded({"/props": props}) as production:
        (tmp_path / "vibey-gh.toml").write_text(
            "[local_models]\n"
            'runner = "llama-server"\n'
            f'production_url = "{production.url}"\n'
            "concurrent_runs = 3\nwindow = 2048\n"
            'runner_args = ["-fa", "on", "--cache-type-k", "q8_0"]\n'
        )
        monkeypatch.chdir(tmp_path)
        probes = server_without_dmi(tmp_path / "root")
        text = doctor([], probes=probes).output
        data = json.loads(doctor(["--json"], probes=probes).output)
    assert re.search(
        r"settings +runner_args=-fa on --cache-type-k q8_0 +\[config runner_args\]", text
    )
    assert "serving slots    2" in text
    assert "differs from the config: it serves 2 slot(s), concurrent_runs is 3" in text
    assert "differs from the config: its context per slot is 1024, window is 2048" in text
    assert data["runner"]["settings"] == {"runner_args": "-fa on --cache-type-k q8_0"}
    assert data["fingerprint"]["fields"]["runner_settings"] == data["runner"]["settings"]
    assert len(data["differs_from_config"]) == 2  # the same model file: no difference there

"""PlatformProbes: one place picks the probes, the sampler and the parallelism per OS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.platforms.source_scan import Use, source_files, uses_in, uses_in_source
from vibey_gh.platforms.device import darwin
from vibey_gh.platforms.device.darwin import DarwinDeviceProbe, DarwinMemorySampler
from vibey_gh.platforms.device.linux import LinuxDeviceProbe, LinuxMemorySampler
from vibey_gh.platforms.device.probes import PlatformProbes, detect_device
from vibey_gh.platforms.nvidia import NvmlGpus
from vibey_gh.platforms.parallelism import (
    MacOSAppParallelism,
    ManualParallelism,
    SystemdParallelism,
)
from vibey_gh.platforms.process.commands import CannedCommandRunner

# the systemd unit of the Ollama service (the Ollama kind names it)
UNIT = "ollama"


def no_nvml(fake_nvml: Any) -> NvmlGpus:
    return NvmlGpus(fake_nvml(init_error="Driver Not Loaded"))


def test_linux_reads_the_injected_root(machine: Any, fake_nvml: Any) -> None:
    root = machine(
        {
            "/proc/meminfo": "fixture:linux_proc_meminfo_firecracker_noswap.txt",
            "/proc/vmstat": "fixture:linux_vmstat_swapping.txt",
            "/etc/os-release": "fixture:linux_os_release_debian12.txt",
        }
    )
    probes = PlatformProbes.detect("linux", root, CannedCommandRunner(), no_nvml(fake_nvml))
    assert probes.platform == "linux"
    assert isinstance(probes.device, LinuxDeviceProbe)
    assert isinstance(probes.memory, LinuxMemorySampler)
    assert probes.device.describe().os_version == "12"
    assert probes.memory.sample().swap_in_bytes == 580 * probes.memory.page_size


def test_darwin_runs_the_injected_commands(fixture: Any) -> None:
    run = CannedCommandRunner({darwin.SW_VERS: (0, "26.7\n")})
    probes = PlatformProbes.detect("darwin", run=run)
    assert isinstance(probes.device, DarwinDeviceProbe)
    assert isinstance(probes.memory, DarwinMemorySampler)
    facts = probes.device.describe()
    assert (facts.os_name, facts.os_version) == ("macOS", "26.7")
    assert darwin.SW_VERS in run.calls


@pytest.mark.parametrize("platform", ["win32", "freebsd14", "cygwin"])
def test_unsupported_platform_reads_none_with_the_reason(platform: str) -> None:
    probes = PlatformProbes.detect(platform, run=CannedCommandRunner())
    facts = probes.device.describe()
    reason = f"unsupported platform: {platform}"
    assert facts.memory_bytes is None and facts.processor is None and facts.accelerators == ()
    assert set(facts.missing.values()) == {reason}
    assert "memory_bytes" in facts.missing and "os_version" in facts.missing
    sample = probes.memory.sample()
    assert sample.wired_bytes is None and sample.swap_out_bytes is None
    assert sample.missing["wired_bytes"] == reason
    assert probes.memory.swap_space().reason == reason


def test_the_device_probe_alone_describes_what_the_whole_probes_describe(
    machine: Any, fake_nvml: Any
) -> None:
    root = machine(
        {
            "/proc/meminfo": "fixture:linux_proc_meminfo_firecracker_noswap.txt",
            "/etc/os-release": "fixture:linux_os_release_debian12.txt",
        }
    )
    run = CannedCommandRunner({darwin.SW_VERS: (0, "26.7\n")})
    for platform in ("linux", "darwin", "win32"):
        whole = PlatformProbes.detect(platform, root, run, no_nvml(fake_nvml)).device.describe()
        alone = detect_device(platform, root, run, no_nvml(fake_nvml)).describe()
        assert alone == whole
    assert detect_device("linux", root, run, no_nvml(fake_nvml)).describe().os_version == "12"


def test_service_parallelism_per_platform(tmp_path: Path) -> None:
    run = CannedCommandRunner()
    mac = PlatformProbes.detect("darwin", run=run).service_parallelism(UNIT)
    no_systemd = PlatformProbes.detect("linux", tmp_path, run).service_parallelism(UNIT)
    (tmp_path / "run/systemd/system").mkdir(parents=True)
    linux = PlatformProbes.detect("linux", tmp_path, run).service_parallelism(UNIT)
    other = PlatformProbes.detect("win32", run=run).service_parallelism(UNIT)
    assert isinstance(mac, MacOSAppParallelism)
    assert isinstance(linux, SystemdParallelism) and linux.root == tmp_path
    assert isinstance(no_systemd, ManualParallelism), "no drop-in where systemd is not init"
    (manual,) = no_systemd.plan(2, 8192)
    assert "this host does not run systemd" in manual.description and not manual.argv
    assert isinstance(other, ManualParallelism)
    (note,) = other.plan(2, 8192)
    assert "OLLAMA_NUM_PARALLEL=2" in note.description and not note.argv


# Outside platforms/, none of these: naming the OS, its modules, or the calls that differ
# between systems (durable fsync, process groups and sessions, signals waited for by a thread).
NAMES_AN_OS = {"sys.platform", "platform.system", "platform.platform", "platform.mac_ver",
               "os.uname", "os.name"}  # fmt: skip
OS_MODULES = {"fcntl", "termios", "pwd", "grp", "resource", "msvcrt", "winreg", "_winapi",
              "posix", "nt"}  # fmt: skip
SEAM_CALLS = {
    "os.fsync", "os.fdatasync", "os.sync", "os.killpg", "os.getpgid", "os.setpgid",
    "os.getpgrp", "os.setsid", "os.getsid", "os.kill", "signal.pthread_sigmask",
    "signal.sigwait", "signal.pthread_kill", "signal.set_wakeup_fd", "start_new_session=",
    "process_group=", "preexec_fn=",
}  # fmt: skip


def os_specific(use: Use) -> bool:
    module = use.name.split(".")[0]
    return use.name in NAMES_AN_OS or module in OS_MODULES or use.name in SEAM_CALLS


def test_nothing_else_names_an_operating_system() -> None:
    offenders = [
        use.where()
        for path in source_files(outside_platforms=True)
        for use in uses_in(path)
        if os_specific(use)
    ]
    assert offenders == [], "move these behind platforms/:\n" + "\n".join(offenders)
    # Within platforms/, only probes.py, device_probe.py and support.py name the OS itself.
    naming = [
        use.where()
        for path in source_files(outside_platforms=False)
        for use in uses_in(path)
        if use.name in NAMES_AN_OS
        and path.name not in ("probes.py", "device_probe.py", "support.py")
    ]
    assert naming == []


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("import fcntl\n", "fcntl"),
        ("from resource import getrlimit\n", "resource"),
        ("import os\nos.fsync(3)\n", "os.fsync"),
        ("from os import killpg\n", "os.killpg"),
        ("import sys as system\nif system.platform == 'darwin': pass\n", "sys.platform"),
        ("import subprocess\nsubprocess.Popen(['x'], start_new_session=True)\n",
         "start_new_session="),
    ],
)  # fmt: skip
def test_the_os_check_finds_each_kind_of_use(source: str, name: str) -> None:
    found = [use for use in uses_in_source(source, Path(__file__)) if os_specific(use)]
    assert name in {use.name for use in found}

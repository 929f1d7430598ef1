"""Linux probe and sampler on machine trees built from captured files."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.platforms.device.linux import LinuxDeviceProbe, LinuxMemorySampler
from vibey_gh.platforms.device.procfs import parse_cpuinfo_processor, parse_os_release, pick_fields
from vibey_gh.platforms.nvidia import MIB, NVIDIA_SMI_QUERY, NvmlGpus
from vibey_gh.platforms.process.commands import CannedCommandRunner

GIB = 1 << 30
KIB = 1024
FIRECRACKER_TOTAL = 24684084 * KIB
FIRECRACKER_AVAILABLE = 23289608 * KIB

SERVER = {
    "/sys/class/dmi/id/product_name": "fixture:linux_dmi_product_name_server.txt",
    "/sys/class/dmi/id/sys_vendor": "fixture:linux_dmi_sys_vendor_dell.txt",
    "/proc/cpuinfo": "fixture:linux_cpuinfo_x86.txt",
    "/proc/meminfo": "fixture:linux_proc_meminfo_firecracker_noswap.txt",
    "/proc/vmstat": "fixture:linux_vmstat_noswap.txt",
    "/etc/os-release": "fixture:linux_os_release_ubuntu2604.txt",
}
CGROUP2_8GI = {
    "/sys/fs/cgroup/memory.max": "fixture:linux_cgroup2_memory.max_8Gi.txt",
    "/sys/fs/cgroup/memory.current": "fixture:linux_cgroup2_memory.current.txt",
}
CGROUP2_UNLIMITED = {
    "/sys/fs/cgroup/memory.max": "fixture:linux_cgroup2_memory.max_unlimited.txt",
    "/sys/fs/cgroup/memory.current": "fixture:linux_cgroup2_memory.current.txt",
}
V1 = "/sys/fs/cgroup/memory/memory"
CGROUP1_4GI = {
    f"{V1}.limit_in_bytes": "fixture:linux_cgroup1_memory.limit_in_bytes_4Gi.txt",
    f"{V1}.usage_in_bytes": "fixture:linux_cgroup1_memory.usage_in_bytes.txt",
}
CGROUP1_UNLIMITED = {
    f"{V1}.limit_in_bytes": "fixture:linux_cgroup1_memory.limit_in_bytes_unlimited.txt",
    f"{V1}.usage_in_bytes": "fixture:linux_cgroup1_memory.usage_in_bytes.txt",
}


class StepClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def monotonic(self) -> float:
        self.now_s += 1.0
        return self.now_s

    def now(self) -> float:
        return 1_800_000_000.0

    def sleep(self, seconds: float) -> None:
        self.now_s += seconds


def no_gpu_nvml(fake_nvml: Any) -> NvmlGpus:
    return NvmlGpus(fake_nvml(init_error="Driver Not Loaded"))


def probe(root: Path, fake_nvml: Any, nvml: NvmlGpus | None = None, run: Any = None) -> Any:
    return LinuxDeviceProbe(root, nvml or no_gpu_nvml(fake_nvml), run or CannedCommandRunner())


# ---------------------------------------------------------------------------------------------
# Device
# ---------------------------------------------------------------------------------------------


def test_server_with_gpus_under_a_cgroup_v2_limit(machine: Any, fake_nvml: Any) -> None:
    root = machine(SERVER | CGROUP2_8GI)
    nvml = NvmlGpus(fake_nvml([("NVIDIA H200", 141 * GIB, 0), ("NVIDIA H200", 141 * GIB, 0)]))
    facts = probe(root, fake_nvml, nvml).describe()
    assert facts.hardware_model == "Dell Inc. PowerEdge R760xa"
    assert facts.processor == "AMD EPYC 9454 48-Core Processor"
    assert facts.memory_bytes == FIRECRACKER_TOTAL
    assert facts.memory_limit_bytes == 8 * GIB
    assert facts.memory_budget_bytes == 8 * GIB
    assert [(a.name, a.memory_bytes, a.index, a.kind) for a in facts.accelerators] == [
        ("NVIDIA H200", 141 * GIB, 0, "gpu"),
        ("NVIDIA H200", 141 * GIB, 1, "gpu"),
    ]
    assert (facts.os_name, facts.os_version) == ("Ubuntu", "26.04")
    assert facts.missing == {}
    assert facts.sources["memory_limit_bytes"] == "/sys/fs/cgroup/memory.max (cgroup v2)"
    assert facts.sources["accelerators"] == "NVML"
    assert facts.sources["processor"] == "/proc/cpuinfo model name"
    assert facts.sources["hardware_model"] == "/sys/class/dmi/id/sys_vendor + product_name"


def test_vendor_already_in_product_name_is_not_repeated(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {"/sys/class/dmi/id/product_name": "Dell Inc. PowerEdge R760xa\n"}
    assert (
        probe(machine(files), fake_nvml).describe().hardware_model == "Dell Inc. PowerEdge R760xa"
    )


def test_kvm_guest_names_its_virtual_board(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {
        "/sys/class/dmi/id/product_name": "fixture:linux_dmi_product_name_kvm.txt",
        "/sys/class/dmi/id/sys_vendor": "fixture:linux_dmi_sys_vendor_qemu.txt",
    }
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.hardware_model == "QEMU Standard PC (Q35 + ICH9, 2009)"


def test_no_dmi_is_none_with_a_reason(machine: Any, fake_nvml: Any) -> None:
    files = {k: v for k, v in SERVER.items() if "/dmi/" not in k}
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.hardware_model is None
    assert "no DMI" in facts.missing["hardware_model"]
    assert "/sys/class/dmi/id/product_name is absent" in facts.missing["hardware_model"]


def test_board_without_dmi_names_itself_in_the_device_tree(machine: Any, fake_nvml: Any) -> None:
    files = {k: v for k, v in SERVER.items() if "/dmi/" not in k} | {
        "/proc/device-tree/model": "Raspberry Pi 4 Model B Rev 1.4\x00",
        "/proc/cpuinfo": "fixture:linux_cpuinfo_arm_board.txt",
    }
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.hardware_model == "Raspberry Pi 4 Model B Rev 1.4"
    assert facts.sources["hardware_model"] == "/proc/device-tree/model"
    assert facts.processor == "BCM2835"


def test_arm64_cpuinfo_without_names_uses_implementer_and_part() -> None:
    text = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"
    assert parse_cpuinfo_processor(text) == (
        "CPU implementer 0x41 part 0xd0c",
        "CPU implementer, CPU part",
    )
    assert parse_cpuinfo_processor("processor\t: 0\n") == (None, None)


def test_cgroup_v2_max_means_no_limit(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine(SERVER | CGROUP2_UNLIMITED), fake_nvml).describe()
    assert facts.memory_limit_bytes is None
    assert facts.missing["memory_limit_bytes"] == "no cgroup limit (/sys/fs/cgroup/memory.max: max)"
    assert facts.memory_budget_bytes == FIRECRACKER_TOTAL


def test_cgroup_v1_limit_is_read(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine(SERVER | CGROUP1_4GI), fake_nvml).describe()
    assert facts.memory_limit_bytes == 4 * GIB
    assert facts.sources["memory_limit_bytes"] == (
        "/sys/fs/cgroup/memory/memory.limit_in_bytes (cgroup v1)"
    )


def test_cgroup_v1_huge_value_means_no_limit(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine(SERVER | CGROUP1_UNLIMITED), fake_nvml).describe()
    assert facts.memory_limit_bytes is None
    assert "no cgroup limit" in facts.missing["memory_limit_bytes"]
    assert "9223372036854771712" in facts.missing["memory_limit_bytes"]


def test_cgroup_limit_above_physical_memory_is_no_limit(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {
        "/sys/fs/cgroup/memory.max": str(64 * GIB),
        "/sys/fs/cgroup/memory.current": "0",
    }
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.memory_limit_bytes is None
    assert (
        facts.missing["memory_limit_bytes"] == "cgroup limit 64.0 GiB is not below physical memory"
    )


def test_no_cgroup_files_is_said(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine(SERVER), fake_nvml).describe()
    assert facts.memory_limit_bytes is None
    assert facts.missing["memory_limit_bytes"].startswith("no cgroup memory files")


def test_garbage_in_a_cgroup_file_is_a_reason(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {"/sys/fs/cgroup/memory.max": "lots\n"}
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.memory_limit_bytes is None
    assert facts.missing["memory_limit_bytes"] == (
        "/sys/fs/cgroup/memory.max holds 'lots', not a byte count"
    )


def test_nvidia_smi_is_the_fallback_when_nvml_fails(
    machine: Any, fake_nvml: Any, fixture: Callable[[str], str]
) -> None:
    run = CannedCommandRunner({NVIDIA_SMI_QUERY: (0, fixture("nvidia_smi_index_2gpu.txt"))})
    facts = probe(machine(SERVER), fake_nvml, run=run).describe()
    assert run.calls == [NVIDIA_SMI_QUERY]
    assert [(a.name, a.memory_bytes, a.index) for a in facts.accelerators] == [
        ("NVIDIA RTX A6000", 49140 * MIB, 0),
        ("NVIDIA RTX A6000", 49140 * MIB, 1),
    ]
    assert facts.sources["accelerators"] == "nvidia-smi"
    assert "accelerators" not in facts.missing


def test_nvidia_smi_is_not_run_when_nvml_answers(machine: Any, fake_nvml: Any) -> None:
    run = CannedCommandRunner()
    nvml = NvmlGpus(fake_nvml([("NVIDIA L4", 24 * GIB, 0)]))
    probe(machine(SERVER), fake_nvml, nvml, run).describe()
    assert run.calls == []


def test_no_gpu_anywhere_is_an_empty_list_with_both_reasons(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine(SERVER), fake_nvml).describe()
    assert facts.accelerators == ()
    assert facts.missing["accelerators"] == (
        "no NVIDIA GPU: NVML unavailable: Driver Not Loaded; nvidia-smi: nvidia-smi not found"
    )


def test_os_release_without_version_id(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {"/etc/os-release": "fixture:linux_os_release_rolling.txt"}
    facts = probe(machine(files), fake_nvml).describe()
    assert facts.os_name == "Arch Linux"
    assert facts.os_version is None
    assert "no VERSION_ID" in facts.missing["os_version"]


def test_os_release_falls_back_to_usr_lib(machine: Any, fake_nvml: Any) -> None:
    files = {k: v for k, v in SERVER.items() if k != "/etc/os-release"}
    files["/usr/lib/os-release"] = "fixture:linux_os_release_debian12.txt"
    facts = probe(machine(files), fake_nvml).describe()
    assert (facts.os_name, facts.os_version) == ("Debian GNU/Linux", "12")
    assert facts.sources["os_version"] == "/usr/lib/os-release VERSION_ID"
    assert facts.sources["os_name"] == "/usr/lib/os-release NAME"


def test_empty_machine_reports_every_field_missing(machine: Any, fake_nvml: Any) -> None:
    facts = probe(machine({}), fake_nvml).describe()
    assert facts.memory_bytes is None and facts.processor is None and facts.os_name is None
    assert facts.missing["memory_bytes"] == "/proc/meminfo is absent"
    assert facts.missing["processor"] == "/proc/cpuinfo is absent"
    assert "/etc/os-release is absent" in facts.missing["os_name"]
    assert set(facts.missing) >= {"hardware_model", "accelerators", "os_version"}


def test_pick_fields_takes_only_the_named_whole_fields() -> None:
    text = "pswpin 5\npswpin_extra 9\nxpswpout 7\npswpout 6\nMemTotal:   10 kB\n"
    assert pick_fields(text, ("pswpin", "pswpout")) == {"pswpin": 5, "pswpout": 6}
    assert pick_fields(text, ("MemTotal",)) == {"MemTotal": 10 * KIB}


def test_os_release_quoting() -> None:
    values = parse_os_release("NAME='Arch Linux'\nVERSION_ID=\"1.0\"\n# comment\nID=arch\nBAD\n")
    assert values == {"NAME": "Arch Linux", "VERSION_ID": "1.0", "ID": "arch"}


# ---------------------------------------------------------------------------------------------
# Sampler
# ---------------------------------------------------------------------------------------------


def sampler(
    root: Path, fake_nvml: Any, nvml: NvmlGpus | None = None, page: int = 4096
) -> LinuxMemorySampler:
    return LinuxMemorySampler(root, nvml or no_gpu_nvml(fake_nvml), StepClock(), page_size=page)


def test_sample_without_swap_or_limit(machine: Any, fake_nvml: Any) -> None:
    sample = sampler(machine(SERVER), fake_nvml).sample()
    assert sample.t == 101.0
    assert sample.total_bytes == FIRECRACKER_TOTAL
    assert sample.wired_bytes == FIRECRACKER_TOTAL - FIRECRACKER_AVAILABLE
    assert sample.used_bytes == sample.wired_bytes
    assert sample.free_share == pytest.approx(23289608 / 24684084)
    assert (sample.swap_in_bytes, sample.swap_out_bytes) == (0, 0)
    assert sample.gpus == ()
    assert sample.missing == {"gpus": "NVML unavailable: Driver Not Loaded"}


@pytest.mark.parametrize("page", [4096, 16384])
def test_swap_counters_are_pages_times_page_size(machine: Any, fake_nvml: Any, page: int) -> None:
    files = SERVER | {"/proc/vmstat": "fixture:linux_vmstat_swapping.txt"}
    sample = sampler(machine(files), fake_nvml, page=page).sample()
    assert sample.swap_in_bytes == 580 * page
    assert sample.swap_out_bytes == 5533 * page


def test_under_a_cgroup_v2_limit_wired_is_the_cgroup_usage(machine: Any, fake_nvml: Any) -> None:
    sample = sampler(machine(SERVER | CGROUP2_8GI), fake_nvml).sample()
    assert sample.total_bytes == 8 * GIB
    assert sample.wired_bytes == 3 * GIB
    assert sample.used_bytes == 3 * GIB
    # the cgroup has 5/8 free; the host has more, so the cgroup's share is the one that binds
    assert sample.free_share == pytest.approx(5 / 8)


def test_under_a_cgroup_v1_limit_wired_is_the_cgroup_usage(machine: Any, fake_nvml: Any) -> None:
    sample = sampler(machine(SERVER | CGROUP1_4GI), fake_nvml).sample()
    assert (sample.total_bytes, sample.wired_bytes) == (4 * GIB, 1 * GIB)
    assert sample.free_share == pytest.approx(3 / 4)


def test_the_host_free_share_binds_when_it_is_lower(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | CGROUP2_8GI | {"/proc/meminfo": "fixture:linux_proc_meminfo_swap.txt"}
    sample = sampler(machine(files), fake_nvml).sample()
    assert sample.free_share == pytest.approx(4936816 / 24684084)


@pytest.mark.parametrize("cgroup", [CGROUP2_UNLIMITED, CGROUP1_UNLIMITED])
def test_unlimited_cgroups_leave_host_figures(
    machine: Any, fake_nvml: Any, cgroup: dict[str, str]
) -> None:
    sample = sampler(machine(SERVER | cgroup), fake_nvml).sample()
    assert sample.total_bytes == FIRECRACKER_TOTAL
    assert sample.wired_bytes == FIRECRACKER_TOTAL - FIRECRACKER_AVAILABLE


def test_limit_without_usage_file_is_unknown_not_zero(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {"/sys/fs/cgroup/memory.max": "fixture:linux_cgroup2_memory.max_8Gi.txt"}
    sample = sampler(machine(files), fake_nvml).sample()
    assert sample.wired_bytes is None and sample.free_share is None
    assert "memory.current is absent" in sample.missing["wired_bytes"]


def test_missing_proc_files_are_reasons(machine: Any, fake_nvml: Any) -> None:
    sample = sampler(machine({}), fake_nvml).sample()
    assert sample.wired_bytes is None and sample.total_bytes is None
    assert sample.swap_in_bytes is None and sample.swap_out_bytes is None
    assert sample.missing["wired_bytes"] == "/proc/meminfo is absent"
    assert sample.missing["swap_out_bytes"] == "/proc/vmstat is absent"


def test_vmstat_without_swap_counters_is_a_reason(machine: Any, fake_nvml: Any) -> None:
    files = SERVER | {"/proc/vmstat": "nr_free_pages 1\n"}
    sample = sampler(machine(files), fake_nvml).sample()
    assert sample.swap_in_bytes is None
    assert sample.missing["swap_in_bytes"] == "/proc/vmstat has no pswpin counter"


def test_gpu_memory_comes_from_nvml(machine: Any, fake_nvml: Any) -> None:
    nvml = NvmlGpus(fake_nvml([("NVIDIA L40S", 48 * GIB, 20 * GIB)]))
    sample = sampler(machine(SERVER), fake_nvml, nvml).sample()
    assert [(g.name, g.used_bytes, g.total_bytes) for g in sample.gpus] == [
        ("NVIDIA L40S", 20 * GIB, 48 * GIB)
    ]
    assert "gpus" not in sample.missing


def test_swap_space(machine: Any, fake_nvml: Any) -> None:
    none = sampler(machine(SERVER), fake_nvml).swap_space()
    assert (none.total_bytes, none.used_bytes) == (0, 0)
    files = SERVER | {"/proc/meminfo": "fixture:linux_proc_meminfo_swap.txt"}
    some = sampler(machine(files), fake_nvml).swap_space()
    assert some.total_bytes == 8388604 * KIB
    assert some.used_bytes == (8388604 - 6291452) * KIB
    assert sampler(machine({}), fake_nvml).swap_space().reason == "/proc/meminfo is absent"


# ---------------------------------------------------------------------------------------------
# This machine
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads this Linux machine")
def test_live_linux_machine(fake_nvml: Any, fixture: Callable[[str], str]) -> None:
    facts = LinuxDeviceProbe(nvml=no_gpu_nvml(fake_nvml), run=CannedCommandRunner()).describe()
    assert facts.memory_bytes is not None and facts.memory_bytes > 0
    assert facts.os_name
    for name in ("hardware_model", "processor", "os_version", "memory_limit_bytes"):
        value = getattr(facts, name)
        assert (value is None) == (name in facts.missing), name
    sample = LinuxMemorySampler(nvml=no_gpu_nvml(fake_nvml)).sample()
    assert sample.total_bytes is not None and sample.wired_bytes is not None
    assert 0 < sample.wired_bytes <= sample.total_bytes
    assert sample.free_share is not None and 0.0 <= sample.free_share <= 1.0
    assert sample.swap_out_bytes is not None and sample.swap_out_bytes >= 0

"""macOS probe and sampler on captured tool output; a live test on a Mac."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.clocks import ManualClock
from vibey_gh.platforms.device import darwin
from vibey_gh.platforms.device.darwin import (
    DarwinDeviceProbe,
    DarwinMemorySampler,
    parse_displays,
    parse_memory_pressure,
    parse_sw_vers,
    parse_swapusage,
    parse_vm_stat,
)
from vibey_gh.platforms.process.commands import CannedCommandRunner, SubprocessCommandRunner

GIB = 1 << 30
MIB = 1 << 20
Fixture = Callable[[str], str]


def arm64_mac(fixture: Fixture) -> CannedCommandRunner:
    return CannedCommandRunner(
        {
            darwin.SYSCTL_DEVICE: (0, fixture("macos_sysctl_n_model_memsize_brand_arm64.txt")),
            darwin.SYSTEM_PROFILER: (0, fixture("macos_system_profiler_displays_arm64.json")),
            darwin.SW_VERS: (0, "26.6.2\n"),
            darwin.VM_STAT: (0, fixture("macos_vm_stat_arm64.txt")),
            darwin.MEMORY_PRESSURE: (0, fixture("macos_memory_pressure_arm64.txt")),
            darwin.SWAPUSAGE: (0, fixture("macos_sysctl_vm_swapusage.txt")),
        }
    )


# ---------------------------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version"), [("macos_sw_vers_tabs1.txt", "12.6"), ("macos_sw_vers_tabs2.txt", "15.1")]
)
def test_sw_vers_both_tab_layouts(fixture: Fixture, name: str, version: str) -> None:
    assert parse_sw_vers(fixture(name)) == ("macOS", version)


def test_sw_vers_product_version_alone() -> None:
    assert parse_sw_vers("26.6.2\n") == (None, "26.6.2")
    assert parse_sw_vers("") == (None, None)


def test_vm_stat_arm64_page_size_and_counters(fixture: Fixture) -> None:
    page, pages = parse_vm_stat(fixture("macos_vm_stat_arm64.txt"))
    assert page == 16384
    assert pages["Pages wired down"] == 301234
    assert pages["Pages occupied by compressor"] == 512044
    assert pages["Translation faults"] == 912345678
    assert (pages["Swapins"], pages["Swapouts"]) == (345678, 456789)


def test_vm_stat_x86_64_page_size(fixture: Fixture) -> None:
    page, pages = parse_vm_stat(fixture("macos_vm_stat_x86_64.txt"))
    assert page == 4096
    assert pages["Pages free"] == 3125000


def test_vm_stat_without_header_is_rejected() -> None:
    with pytest.raises(ValueError, match="page size"):
        parse_vm_stat("Pages free: 1.\n")


@pytest.mark.parametrize(
    "name", ["macos_memory_pressure_arm64.txt", "macos_memory_pressure_Q_arm64.txt"]
)
def test_memory_pressure_both_forms(fixture: Fixture, name: str) -> None:
    assert parse_memory_pressure(fixture(name)) == (34359738368, 0.38)


def test_swapusage(fixture: Fixture) -> None:
    total, used = parse_swapusage(fixture("macos_sysctl_vm_swapusage.txt"))
    assert total == 3072 * MIB
    assert used == int(1536.25 * MIB)
    with pytest.raises(ValueError):
        parse_swapusage("vm.swapusage: nonsense")


def test_displays_apple_silicon_is_integrated_with_core_count(fixture: Fixture) -> None:
    (gpu,) = parse_displays(fixture("macos_system_profiler_displays_arm64.json"))
    assert gpu.name == "Apple M3 Max (40 GPU cores)"
    assert gpu.kind == "integrated"
    assert gpu.memory_bytes is None


def test_displays_m1_uses_the_model_not_the_internal_item_name(fixture: Fixture) -> None:
    (gpu,) = parse_displays(fixture("macos_system_profiler_displays_m1_khw.json"))
    assert gpu.name == "Apple M1 (8 GPU cores)"


def test_displays_intel_mac_with_a_discrete_gpu(fixture: Fixture) -> None:
    gpus = parse_displays(fixture("macos_system_profiler_displays_x86_64_dual.json"))
    assert [(g.index, g.name, g.kind, g.memory_bytes) for g in gpus] == [
        (0, "Intel UHD Graphics 630", "integrated", None),
        (1, "AMD Radeon Pro 5500M", "gpu", 8 * GIB),
    ]


# ---------------------------------------------------------------------------------------------
# Probe
# ---------------------------------------------------------------------------------------------


def test_probe_arm64(fixture: Fixture) -> None:
    facts = DarwinDeviceProbe(arm64_mac(fixture)).describe()
    assert facts.hardware_model == "Mac15,8"
    assert facts.memory_bytes == 32 * GIB
    assert facts.processor == "Apple M3 Max"
    assert [a.name for a in facts.accelerators] == ["Apple M3 Max (40 GPU cores)"]
    assert (facts.os_name, facts.os_version) == ("macOS", "26.6.2")
    assert facts.memory_limit_bytes is None
    assert facts.missing == {"memory_limit_bytes": "no memory limit below physical memory on macOS"}
    assert facts.sources["memory_bytes"] == "sysctl hw.memsize"
    assert facts.sources["accelerators"] == "system_profiler SPDisplaysDataType"


def test_probe_x86_64(fixture: Fixture) -> None:
    run = arm64_mac(fixture)
    run.answers[darwin.SYSCTL_DEVICE] = (
        0,
        fixture("macos_sysctl_n_model_memsize_brand_x86_64.txt"),
    )
    facts = DarwinDeviceProbe(run).describe()
    assert facts.hardware_model == "MacBookPro16,1"
    assert facts.memory_bytes == 16 * GIB
    assert facts.processor == "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"


def test_probe_asks_key_by_key_when_one_key_is_unknown() -> None:
    # an unknown key makes sysctl exit non-zero and drop that key's line
    run = CannedCommandRunner(
        {
            darwin.SYSCTL_DEVICE: (1, "Mac15,8\n34359738368\n"),
            ("sysctl", "-n", "hw.model"): (0, "Mac15,8\n"),
            ("sysctl", "-n", "hw.memsize"): (0, "34359738368\n"),
            ("sysctl", "-n", "machdep.cpu.brand_string"): (1, ""),
        }
    )
    facts = DarwinDeviceProbe(run).describe()
    assert facts.hardware_model == "Mac15,8"
    assert facts.memory_bytes == 32 * GIB
    assert facts.processor is None
    assert facts.missing["processor"] == "`sysctl -n machdep.cpu.brand_string` exited 1"


def test_probe_without_tools_reports_each_reason() -> None:
    facts = DarwinDeviceProbe(CannedCommandRunner()).describe()
    assert facts.memory_bytes is None and facts.accelerators == () and facts.os_version is None
    assert facts.missing["memory_bytes"] == "sysctl not found"
    assert facts.missing["accelerators"] == "system_profiler not found"
    assert facts.missing["os_version"] == "sw_vers not found"


def test_probe_with_unreadable_system_profiler(fixture: Fixture) -> None:
    run = arm64_mac(fixture)
    run.answers[darwin.SYSTEM_PROFILER] = (0, "{not json")
    facts = DarwinDeviceProbe(run).describe()
    assert facts.accelerators == ()
    assert facts.missing["accelerators"].startswith("unreadable system_profiler output")


# ---------------------------------------------------------------------------------------------
# Sampler
# ---------------------------------------------------------------------------------------------


def test_sample_arm64(fixture: Fixture) -> None:
    sample = DarwinMemorySampler(arm64_mac(fixture), ManualClock(t=42.0)).sample()
    page = 16384
    assert sample.t == 42.0
    assert sample.wired_bytes == 301234 * page
    assert sample.used_bytes == (301234 + 812345 + 512044) * page
    assert sample.total_bytes == 34359738368
    assert sample.free_share == pytest.approx(0.38)
    assert sample.swap_in_bytes == 345678 * page
    assert sample.swap_out_bytes == 456789 * page
    assert set(sample.missing) == {"gpus"}


def test_sample_x86_64_idle_without_swap(fixture: Fixture) -> None:
    run = arm64_mac(fixture)
    run.answers[darwin.VM_STAT] = (0, fixture("macos_vm_stat_x86_64.txt"))
    sample = DarwinMemorySampler(run, ManualClock(t=42.0)).sample()
    assert sample.wired_bytes == 612345 * 4096
    assert (sample.swap_in_bytes, sample.swap_out_bytes) == (0, 0)


def test_sample_without_memory_pressure_takes_memsize_once(fixture: Fixture) -> None:
    run = arm64_mac(fixture)
    del run.answers[darwin.MEMORY_PRESSURE]
    run.answers[darwin.MEMSIZE] = (0, "34359738368\n")
    sampler = DarwinMemorySampler(run, ManualClock(t=42.0))
    first, second = sampler.sample(), sampler.sample()
    assert first.total_bytes == second.total_bytes == 34359738368
    assert first.free_share is None
    assert first.missing["free_share"] == "memory_pressure not found"
    assert run.calls.count(darwin.MEMSIZE) == 1


def test_sample_without_vm_stat_is_unknown_not_zero(fixture: Fixture) -> None:
    run = arm64_mac(fixture)
    del run.answers[darwin.VM_STAT]
    sample = DarwinMemorySampler(run, ManualClock(t=42.0)).sample()
    assert sample.wired_bytes is None and sample.swap_out_bytes is None
    assert sample.missing["wired_bytes"] == "vm_stat not found"


def test_swap_space(fixture: Fixture) -> None:
    swap = DarwinMemorySampler(arm64_mac(fixture)).swap_space()
    assert swap.total_bytes == 3072 * MIB and swap.source == "sysctl vm.swapusage"
    missing = DarwinMemorySampler(CannedCommandRunner()).swap_space()
    assert missing.total_bytes is None and missing.reason == "sysctl not found"


@pytest.mark.macos
@pytest.mark.skipif(sys.platform != "darwin", reason="runs only on macOS")
def test_live_mac() -> None:
    run = SubprocessCommandRunner()
    facts = DarwinDeviceProbe(run).describe()
    assert facts.hardware_model and facts.processor and facts.os_version
    assert facts.memory_bytes is not None and facts.memory_bytes > 0
    assert facts.accelerators, facts.missing.get("accelerators")
    sample: Any = DarwinMemorySampler(run).sample()
    assert sample.wired_bytes is not None and 0 < sample.wired_bytes < facts.memory_bytes
    assert sample.free_share is not None and 0.0 <= sample.free_share <= 1.0
    assert sample.swap_out_bytes is not None

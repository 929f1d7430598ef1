"""NVML through a stand-in library with pynvml's function names, the nvidia-smi CSV, and the
real pynvml where it can run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.platforms.nvidia import MIB, NvmlGpus, parse_nvidia_smi_csv

GIB = 1 << 30


def test_nvml_reads_names_and_memory_per_gpu(fake_nvml: Any) -> None:
    library = fake_nvml([("NVIDIA H200", 141 * GIB, 2 * GIB), (b"NVIDIA L4", 24 * GIB, 0)])
    reading = NvmlGpus(library).read()
    assert reading.reason is None
    assert reading.source == "NVML"
    assert [(g.index, g.name, g.total_bytes, g.used_bytes) for g in reading.gpus] == [
        (0, "NVIDIA H200", 141 * GIB, 2 * GIB),
        (1, "NVIDIA L4", 24 * GIB, 0),
    ]


def test_nvml_initialises_once_and_only_queries_memory_per_tick(fake_nvml: Any) -> None:
    library = fake_nvml([("NVIDIA A100", 80 * GIB, GIB)])
    gpus = NvmlGpus(library)
    gpus.read()
    library.calls.clear()
    gpus.read()
    assert library.calls == ["nvmlDeviceGetMemoryInfo(0)"]
    gpus.close()
    assert library.calls[-1] == "nvmlShutdown"


def test_no_driver_gives_empty_list_with_reason(fake_nvml: Any) -> None:
    library = fake_nvml(init_error="NVML Shared Library Not Found")
    reading = NvmlGpus(library).read()
    assert reading.gpus == ()
    assert reading.reason == "NVML unavailable: NVML Shared Library Not Found"


def test_no_gpu_gives_empty_list_with_reason(fake_nvml: Any) -> None:
    reading = NvmlGpus(fake_nvml([])).read()
    assert reading.gpus == ()
    assert reading.reason == "NVML found no NVIDIA GPU"


def test_missing_library_is_a_reason_not_an_error() -> None:
    def no_pynvml() -> Any:
        raise ImportError("No module named 'pynvml'")

    reading = NvmlGpus(importer=no_pynvml).read()
    assert reading.gpus == ()
    assert reading.reason is not None and "not installed" in reading.reason


def test_a_gpu_whose_memory_fails_is_unknown_not_zero(fake_nvml: Any) -> None:
    library = fake_nvml([("GPU A", 8 * GIB, GIB), ("GPU B", 8 * GIB, GIB)], broken_memory={1})
    reading = NvmlGpus(library).read()
    assert reading.gpus[0].used_bytes == GIB
    assert reading.gpus[1].used_bytes is None and reading.gpus[1].total_bytes is None
    assert reading.reason == "GPU 1 memory unreadable: GPU is lost"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "nvidia_smi_index_2gpu.txt",
            [(0, "NVIDIA RTX A6000", 49140, 35), (1, "NVIDIA RTX A6000", 49140, 20)],
        ),
        ("nvidia_smi_query_csv_1gpu.txt", [(0, "NVIDIA H200", 143771, 0)]),
        (
            "nvidia_smi_query_csv_2gpu.txt",
            [(0, "NVIDIA RTX A6000", 49140, 35), (1, "NVIDIA RTX A6000", 49140, 20)],
        ),
        (
            "nvidia_smi_query_csv_noheader_nounits.txt",
            [(0, "NVIDIA GeForce RTX 4090", 24564, 1234)],
        ),
    ],
)
def test_nvidia_smi_csv_layouts(
    fixture: Callable[[str], str], name: str, expected: list[tuple[int, str, int, int]]
) -> None:
    reading = parse_nvidia_smi_csv(fixture(name))
    assert reading.reason is None
    assert reading.source == "nvidia-smi"
    assert [(g.index, g.name, g.total_bytes, g.used_bytes) for g in reading.gpus] == [
        (i, n, t * MIB, u * MIB) for i, n, t, u in expected
    ]


@pytest.mark.parametrize("name", ["nvidia_smi_query_csv_na.txt", "nvidia_smi_index_na.txt"])
def test_nvidia_smi_not_available_memory_is_none_with_reason(
    fixture: Callable[[str], str], name: str
) -> None:
    reading = parse_nvidia_smi_csv(fixture(name))
    assert [(g.name, g.total_bytes, g.used_bytes) for g in reading.gpus] == [
        ("NVIDIA GB10", None, None)
    ]
    assert reading.reason == "nvidia-smi reports no memory total for GPU 0 (NVIDIA GB10)"


def test_nvidia_smi_empty_output_lists_nothing_with_reason() -> None:
    reading = parse_nvidia_smi_csv("")
    assert reading.gpus == () and reading.reason == "nvidia-smi listed no GPU"


def _driver_present() -> bool:
    return Path("/proc/driver/nvidia/version").exists()


@pytest.mark.skipif(_driver_present(), reason="an NVIDIA driver is present here")
def test_real_pynvml_without_a_driver_reports_why() -> None:
    reading = NvmlGpus().read()
    assert reading.gpus == ()
    assert reading.reason is not None and reading.reason.startswith("NVML")


@pytest.mark.nvidia
@pytest.mark.skipif(not _driver_present(), reason="needs an NVIDIA GPU with its driver")
def test_live_nvml_lists_gpus_with_memory() -> None:
    gpus = NvmlGpus()
    try:
        reading = gpus.read()
    finally:
        gpus.close()
    assert reading.gpus, reading.reason
    for gpu in reading.gpus:
        assert gpu.name
        assert gpu.total_bytes is not None and gpu.total_bytes > 0
        assert gpu.used_bytes is not None and 0 <= gpu.used_bytes <= gpu.total_bytes


def test_without_a_loaded_driver_nvml_is_not_even_imported(tmp_path: Path) -> None:
    from vibey_gh.platforms.nvidia import NoNvidiaDriver, NvmlGpus, gpus_for

    source = gpus_for(tmp_path)
    assert isinstance(source, NoNvidiaDriver)
    reading = source.read()
    assert reading.gpus == () and "no NVIDIA driver loaded" in (reading.reason or "")
    (tmp_path / "proc" / "driver" / "nvidia").mkdir(parents=True)
    assert isinstance(gpus_for(tmp_path), NvmlGpus)


def test_process_memory_lists_each_gpus_processes_from_both_lists(fake_nvml: Any) -> None:
    library = fake_nvml(
        [("NVIDIA H200", 141 * GIB, 60 * GIB), ("NVIDIA H200", 141 * GIB, 3 * GIB)],
        compute={0: [(4242, 52 * GIB), (5151, 6 * GIB)], 1: [(4242, 2 * GIB)]},
        graphics={0: [(4242, 52 * GIB)]},  # a process in both lists holds one allocation
    )
    listed = NvmlGpus(library).process_memory()
    assert listed.reason is None
    assert listed.by_gpu == {0: {4242: 52 * GIB, 5151: 6 * GIB}, 1: {4242: 2 * GIB}}


def test_process_memory_nvml_cannot_report_is_unknown_not_zero(fake_nvml: Any) -> None:
    # pynvml gives None where the driver says NVML_VALUE_NOT_AVAILABLE (containers, WDDM)
    library = fake_nvml([("NVIDIA L4", 24 * GIB, 9 * GIB)], compute={0: [(77, None)]})
    assert NvmlGpus(library).process_memory().by_gpu == {0: {77: None}}


def test_process_memory_of_a_lost_gpu_is_left_out_with_the_reason(fake_nvml: Any) -> None:
    library = fake_nvml(
        [("GPU A", 8 * GIB, GIB), ("GPU B", 8 * GIB, GIB)],
        compute={0: [(10, GIB)], 1: [(11, GIB)]},
        broken_processes={1},
    )
    listed = NvmlGpus(library).process_memory()
    assert listed.by_gpu == {0: {10: GIB}}
    assert listed.reason == "GPU 1 process list unreadable: GPU is lost"


def test_process_memory_without_nvml_says_why(fake_nvml: Any) -> None:
    listed = NvmlGpus(fake_nvml(init_error="Driver Not Loaded")).process_memory()
    assert listed.by_gpu == {} and listed.reason == "NVML unavailable: Driver Not Loaded"


@pytest.mark.nvidia
@pytest.mark.skipif(not _driver_present(), reason="needs an NVIDIA GPU with its driver")
def test_live_nvml_process_memory_fits_in_each_gpus_used_memory() -> None:
    gpus = NvmlGpus()
    try:
        reading = gpus.read()
        listed = gpus.process_memory()
    finally:
        gpus.close()
    assert set(listed.by_gpu) <= {gpu.index for gpu in reading.gpus}, listed.reason
    for gpu in reading.gpus:
        known = [b for b in listed.by_gpu.get(gpu.index, {}).values() if b is not None]
        assert all(b >= 0 for b in known)
        if gpu.used_bytes is not None:
            assert sum(known) <= gpu.used_bytes + 64 * MIB  # the two reads are not atomic

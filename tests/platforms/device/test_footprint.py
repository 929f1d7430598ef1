"""Production's footprint: a real process tree serving a port, with GPU memory from a recorded
NVML process list (NVIDIA cannot run here)."""

from __future__ import annotations

from typing import Any

from tests.platforms.listening_child import MB, serving_tree
from tests.support.clocks import ManualClock
from tests.support.ports import free_port
from vibey_gh.platforms.device.footprint import (
    ProductionFootprint,
    is_this_machine,
    production_port,
)
from vibey_gh.platforms.device.probes import this_platform
from vibey_gh.platforms.nvidia import NvmlGpus
from vibey_gh.runners.registry import runner_markers

GIB = 1 << 30
# what marks a model runner's process: the kinds' own names and this package's command
MARKERS = runner_markers()


def test_production_tree_is_found_and_its_memory_read() -> None:
    with serving_tree(held_bytes=80 * MB) as tree:
        footprint = ProductionFootprint(
            f"http://127.0.0.1:{tree.port}", 8080, ("llama-server",), MARKERS, this_platform(), None
        )
        held = footprint.read()
        assert held.pids[0] == tree.pid and tree.child_pid in held.pids
        assert held.host_bytes is not None and held.host_bytes >= 80 * MB
        assert held.gpu_bytes is None
        assert f"listens on port {tree.port}" in held.how and "left out" in held.how


def test_gpu_memory_is_production_trees_share_of_each_gpu(fake_nvml: Any) -> None:
    with serving_tree() as tree:
        library = fake_nvml(
            [("NVIDIA L4", 24 * GIB, 15 * GIB), ("NVIDIA L4", 24 * GIB, 2 * GIB)],
            # production's listener and its child (Ollama's runner) on GPU 0, a stranger beside
            compute={0: [(tree.pid, GIB), (tree.child_pid, 12 * GIB), (1, 2 * GIB)], 1: []},
        )
        footprint = ProductionFootprint(
            f"http://localhost:{tree.port}",
            11434,
            ("ollama",),
            MARKERS,
            this_platform(),
            NvmlGpus(library),
        )
        held = footprint.read()
    assert held.gpu_bytes == {0: 13 * GIB, 1: 0}
    assert "NVML's process list" in held.how


def test_gpu_memory_nvml_cannot_report_leaves_that_gpu_unknown(fake_nvml: Any) -> None:
    with serving_tree() as tree:
        library = fake_nvml(
            [("GPU A", 8 * GIB, 5 * GIB), ("GPU B", 8 * GIB, 5 * GIB)],
            compute={0: [(tree.child_pid, None)], 1: [(tree.pid, 4 * GIB)]},
        )
        footprint = ProductionFootprint(
            f"http://127.0.0.1:{tree.port}",
            8080,
            ("llama-server",),
            MARKERS,
            this_platform(),
            NvmlGpus(library),
        )
        assert footprint.read().gpu_bytes == {0: None, 1: 4 * GIB}


def test_nothing_listening_leaves_nothing_out_and_is_searched_again_later() -> None:
    port = free_port()
    clock = ManualClock()
    footprint = ProductionFootprint(
        f"http://127.0.0.1:{port}",
        8080,
        ("vibey_gh.runners.llamacpp.embedded",),
        MARKERS,
        this_platform(),
        None,
        clock,
        retry_s=10.0,
    )
    held = footprint.read()
    assert held.host_bytes is None and held.gpu_bytes is None
    assert held.how.endswith(f"listens on port {port}: nothing left out")
    with serving_tree(port=port) as tree:
        clock.sleep(5.0)
        assert footprint.read().host_bytes is None  # walking every process once in 10 s
        clock.sleep(6.0)
        assert footprint.read().pids[0] == tree.pid
    # the identified process ended: searched again at once, and said so
    after = footprint.read()
    assert after.host_bytes is None and after.how.endswith("nothing left out")


def test_production_elsewhere_is_not_this_machines_to_leave_out() -> None:
    footprint = ProductionFootprint(
        "http://10.1.2.3:8080", 8080, ("llama-server",), MARKERS, "linux", None
    )
    held = footprint.read()
    assert held.host_bytes is None
    assert held.how == "production runs on 10.1.2.3, not this machine: nothing left out"


def test_hosts_and_ports() -> None:
    assert is_this_machine("127.0.0.1") and is_this_machine("::1") and is_this_machine("localhost")
    assert not is_this_machine("192.0.2.7")
    assert production_port("http://127.0.0.1", 11434) == 11434
    assert production_port("http://127.0.0.1:9000", 11434) == 9000
    assert production_port("http://127.0.0.1:bad", 8080) == 8080

"""Machine trees and a stand-in NVML library for the platform tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "platforms"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture
def fixture() -> Callable[[str], str]:
    """Read one captured file from tests/fixtures/platforms."""
    return fixture_text


MachineTree = Callable[..., Path]


@pytest.fixture
def machine(tmp_path: Path) -> MachineTree:
    """Build a machine's files under tmp_path: machine({"/proc/meminfo": "fixture:...", ...}).

    A value starting with "fixture:" is the named capture; anything else is the file's text.
    Each call builds a fresh root.
    """
    count = 0

    def build(files: dict[str, str]) -> Path:
        nonlocal count
        count += 1
        root = tmp_path / f"machine{count}"
        for name, value in files.items():
            path = root / name.lstrip("/")
            path.parent.mkdir(parents=True, exist_ok=True)
            text = (
                fixture_text(value.removeprefix("fixture:"))
                if value.startswith("fixture:")
                else value
            )
            path.write_text(text, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return build


class FakeNVMLError(Exception):
    pass


@dataclass
class FakeMemoryInfo:
    total: int
    free: int
    used: int


@dataclass
class FakeProcessInfo:
    """One entry of pynvml's running-process lists (nvmlProcessInfo_v3: usedGpuMemory is None
    where the driver reports NVML_VALUE_NOT_AVAILABLE)."""

    pid: int
    usedGpuMemory: int | None  # pynvml's attribute names
    gpuInstanceId: int = 0xFFFFFFFF
    computeInstanceId: int = 0xFFFFFFFF


class FakeNvmlLibrary:
    """The pynvml functions the adapter calls, over a list of (name, total, used) GPUs.

    compute / graphics: per GPU index, the (pid, used bytes or None) NVML lists on it;
    broken_processes: GPUs whose process list fails as a lost GPU does.
    """

    NVMLError = FakeNVMLError

    def __init__(
        self,
        gpus: list[tuple[Any, int, int]] | None = None,
        init_error: str | None = None,
        broken_memory: set[int] | None = None,
        compute: dict[int, list[tuple[int, int | None]]] | None = None,
        graphics: dict[int, list[tuple[int, int | None]]] | None = None,
        broken_processes: set[int] | None = None,
    ) -> None:
        self.gpus = gpus or []
        self.init_error = init_error
        self.broken_memory = broken_memory or set()
        self.compute = compute or {}
        self.graphics = graphics or {}
        self.broken_processes = broken_processes or set()
        self.calls: list[str] = []

    def _processes(
        self, lists: dict[int, list[tuple[int, int | None]]], handle: int
    ) -> list[FakeProcessInfo]:
        if handle in self.broken_processes:
            raise FakeNVMLError("GPU is lost")
        return [FakeProcessInfo(pid, used) for pid, used in lists.get(handle, [])]

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[FakeProcessInfo]:
        self.calls.append(f"nvmlDeviceGetComputeRunningProcesses({handle})")
        return self._processes(self.compute, handle)

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: int) -> list[FakeProcessInfo]:
        self.calls.append(f"nvmlDeviceGetGraphicsRunningProcesses({handle})")
        return self._processes(self.graphics, handle)

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if self.init_error:
            raise FakeNVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")

    def nvmlDeviceGetCount(self) -> int:
        self.calls.append("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        self.calls.append(f"nvmlDeviceGetHandleByIndex({index})")
        return index

    def nvmlDeviceGetName(self, handle: int) -> Any:
        self.calls.append(f"nvmlDeviceGetName({handle})")
        return self.gpus[handle][0]

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> FakeMemoryInfo:
        self.calls.append(f"nvmlDeviceGetMemoryInfo({handle})")
        if handle in self.broken_memory:
            raise FakeNVMLError("GPU is lost")
        _, total, used = self.gpus[handle]
        return FakeMemoryInfo(total=total, free=total - used, used=used)


@pytest.fixture
def fake_nvml() -> type[FakeNvmlLibrary]:
    return FakeNvmlLibrary

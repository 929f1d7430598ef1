"""NVIDIA GPUs: NVML (nvidia-ml-py) for names and memory, and the nvidia-smi CSV as a fallback.

NVML is loaded lazily and initialised once; device handles and names are kept, so a sampler
tick costs one memory query per GPU and no subprocess. No library, no driver or no GPU gives an
empty list with the reason, never an error.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ..interfaces.samples import GpuMemory

MIB = 1 << 20
NVIDIA_SMI_QUERY: tuple[str, ...] = (
    "nvidia-smi",
    "--query-gpu=index,name,memory.total,memory.used",
    "--format=csv,noheader,nounits",
)
NOT_AVAILABLE = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""}


class GpuReading(msgspec.Struct, frozen=True):
    """The GPUs one source saw. `reason` says why the list is empty or partly unknown."""

    gpus: tuple[GpuMemory, ...]
    source: str
    reason: str | None = None


class GpuProcesses(msgspec.Struct, frozen=True):
    """Per GPU index: {pid: GPU memory bytes, None where NVML cannot say}. `reason` says what
    could not be read."""

    by_gpu: dict[int, dict[int, int | None]]
    reason: str | None = None


# The lists NVML keeps per device; pynvml names them without a version suffix.
_PROCESS_QUERIES = (
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetGraphicsRunningProcesses",
)


def _import_pynvml() -> Any:
    return importlib.import_module("pynvml")


def _text(value: object) -> str:
    # nvidia-ml-py before 11.515 returned bytes for names
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class NvmlGpus:
    """GPU names and memory through NVML.

    `library` is the pynvml module or an object with the same function names (tests pass a
    fake); by default pynvml is imported on first use.
    """

    source = "NVML"

    def __init__(
        self, library: Any | None = None, importer: Callable[[], Any] = _import_pynvml
    ) -> None:
        self._library = library
        self._importer = importer
        self._started = False
        self._failure: str | None = None
        self._devices: list[tuple[int, str, Any]] = []

    def _error_types(self) -> tuple[type[BaseException], ...]:
        nvml_error = getattr(self._library, "NVMLError", None)
        if isinstance(nvml_error, type) and issubclass(nvml_error, BaseException):
            return (nvml_error, OSError)
        return (OSError,)

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        if self._library is None:
            try:
                self._library = self._importer()
            except ImportError:
                self._failure = "NVML unavailable: nvidia-ml-py is not installed"
                return
        lib = self._library
        try:
            lib.nvmlInit()
        except self._error_types() as exc:
            self._failure = f"NVML unavailable: {exc}"
            return
        try:
            count = int(lib.nvmlDeviceGetCount())
            for index in range(count):
                handle = lib.nvmlDeviceGetHandleByIndex(index)
                self._devices.append((index, _text(lib.nvmlDeviceGetName(handle)), handle))
        except self._error_types() as exc:
            self._failure = f"NVML could not list GPUs: {exc}"
            self._devices = []
            return
        if not self._devices:
            self._failure = "NVML found no NVIDIA GPU"

    def read(self) -> GpuReading:
        """Each GPU's name, total and used memory, now."""
        self._start()
        if self._failure is not None:
            return GpuReading((), self.source, self._failure)
        gpus: list[GpuMemory] = []
        problems: list[str] = []
        for index, name, handle in self._devices:
            try:
                info = self._library.nvmlDeviceGetMemoryInfo(handle)  # type: ignore[union-attr]
                gpus.append(GpuMemory(index, name, int(info.used), int(info.total)))
            except self._error_types() as exc:
                gpus.append(GpuMemory(index, name, None, None))
                problems.append(f"GPU {index} memory unreadable: {exc}")
        return GpuReading(tuple(gpus), self.source, "; ".join(problems) or None)

    def devices(self) -> tuple[Any, list[tuple[int, Any]], tuple[type[BaseException], ...]] | str:
        """The NVML library, each GPU's index and handle, and the errors its calls raise (for
        the sensors, `platforms.sensors.nvidia_sensors`); why not, when NVML cannot start."""
        self._start()
        if self._failure is not None:
            return self._failure
        handles = [(index, handle) for index, _name, handle in self._devices]
        return self._library, handles, self._error_types()

    def process_memory(self) -> GpuProcesses:
        """Per GPU index, the GPU memory of each process NVML lists on it (compute and graphics).

        A process whose memory NVML cannot report (None from pynvml) is listed with None; a
        GPU whose list fails is left out, with the reason.
        """
        self._start()
        if self._failure is not None:
            return GpuProcesses({}, self._failure)
        lib = self._library
        per_gpu: dict[int, dict[int, int | None]] = {}
        problems: list[str] = []
        for index, _, handle in self._devices:
            processes: dict[int, int | None] = {}
            try:
                for query in _PROCESS_QUERIES:
                    function = getattr(lib, query, None)
                    for entry in function(handle) if function is not None else ():
                        used = getattr(entry, "usedGpuMemory", None)
                        pid = int(entry.pid)
                        if used is None or processes.get(pid, 0) is None:
                            processes[pid] = None
                        else:
                            # a process in both lists holds one allocation: keep the larger
                            processes[pid] = max(int(used), processes.get(pid) or 0)
            except self._error_types() as exc:
                problems.append(f"GPU {index} process list unreadable: {exc}")
                continue
            per_gpu[index] = processes
        return GpuProcesses(per_gpu, "; ".join(problems) or None)

    def close(self) -> None:
        if self._started and self._failure is None and self._library is not None:
            try:
                self._library.nvmlShutdown()
            except self._error_types():
                pass  # shutting down a library that is already gone changes nothing
        self._started, self._failure, self._devices = False, None, []


def _mib(value: str) -> int | None:
    text = value.strip()
    if text in NOT_AVAILABLE:
        return None
    text = text.removesuffix("MiB").strip()
    try:
        return int(float(text)) * MIB
    except ValueError:
        return None


def parse_nvidia_smi_csv(text: str) -> GpuReading:
    """Parse `nvidia-smi --query-gpu=[index,]name,memory.total,memory.used --format=csv…`.

    Accepts output with or without the header line and the " MiB" units, and with or without
    the index column (rows are then numbered in order). "[N/A]" memory is None with a reason.
    """
    gpus: list[GpuMemory] = []
    problems: list[str] = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if not line.strip() or cells[0] in {"index", "name"}:
            continue
        if len(cells) == 4 and cells[0].isdigit():
            index, name, total, used = int(cells[0]), cells[1], cells[2], cells[3]
        elif len(cells) == 3:
            index, name, total, used = len(gpus), cells[0], cells[1], cells[2]
        else:
            problems.append(f"unreadable nvidia-smi line: {line.strip()!r}")
            continue
        total_bytes, used_bytes = _mib(total), _mib(used)
        if total_bytes is None:
            problems.append(f"nvidia-smi reports no memory total for GPU {index} ({name})")
        gpus.append(GpuMemory(index, name, used_bytes, total_bytes))
    reason = "; ".join(problems) or (None if gpus else "nvidia-smi listed no GPU")
    return GpuReading(tuple(gpus), "nvidia-smi", reason)


# Where a loaded NVIDIA driver shows itself. Without either there is no GPU for NVML to find,
# and importing NVML (tens of milliseconds) would only say so more slowly.
NVIDIA_DRIVER_MARKERS = ("proc/driver/nvidia", "dev/nvidiactl")


class NoNvidiaDriver:
    """The GPU source of a machine with no NVIDIA driver loaded: no GPUs, and why."""

    source = "NVIDIA driver"

    def __init__(self, root: Path) -> None:
        shown = " and ".join(str(root / marker) for marker in NVIDIA_DRIVER_MARKERS)
        self.reason = f"no NVIDIA driver loaded ({shown} are absent)"

    def read(self) -> GpuReading:
        return GpuReading((), self.source, self.reason)

    def process_memory(self) -> GpuProcesses:
        return GpuProcesses({}, self.reason)


def gpus_for(root: Path) -> NvmlGpus | NoNvidiaDriver:
    """NVML where an NVIDIA driver is loaded under `root`, else the reason there is none."""
    if any((root / marker).exists() for marker in NVIDIA_DRIVER_MARKERS):
        return NvmlGpus()
    return NoNvidiaDriver(root)

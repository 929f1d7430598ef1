"""PlatformProbes: with `support` and `device_probe`, the one place that names an operating system.

`PlatformProbes.detect()` picks the device probe (`device_probe`, all that `slots allowed`
builds), the memory sampler, the sensors and the way to set the production runner's
parallelism for this OS. An OS without an implementation still gets probes:
their readings are None with the reason "unsupported platform: X".
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.samples import MemorySample
from ..nvidia import NoNvidiaDriver, NvmlGpus, gpus_for
from ..parallelism import (
    CONTEXT_LENGTH,
    NUM_PARALLEL,
    MacOSAppParallelism,
    ManualParallelism,
    SystemdParallelism,
)
from ..process.commands import SubprocessCommandRunner
from ..sensors.combined import sensors_for
from ..support import platform_family as platform_family  # also asked for from here
from ..support import this_platform as this_platform
from .darwin import DarwinMemorySampler
from .device_probe import detect_device as detect_device  # also asked for from here
from .footprint import GpuProcessSource, ProductionFootprint
from .linux import LinuxMemorySampler
from .readings import SwapSpace

if TYPE_CHECKING:
    from ...interfaces.readings import SensorSource
    from ...interfaces.slots_interface import CommandRunner, DeviceProbe, RunnerParallelism

# present exactly when systemd is the init system (sd_booted(3))
SYSTEMD_BOOTED = "run/systemd/system"
SAMPLE_FIELDS = (
    "wired_bytes",
    "used_bytes",
    "total_bytes",
    "free_share",
    "swap_in_bytes",
    "swap_out_bytes",
    "gpus",
)


class MemorySampler(Protocol):
    """A HostMemorySampler that can also say how much swap is configured."""

    def sample(self) -> MemorySample: ...

    def swap_space(self) -> SwapSpace: ...


class UnsupportedMemorySampler:
    def __init__(self, platform: str, clock: Clock = SYSTEM_CLOCK) -> None:
        self.reason = f"unsupported platform: {platform}"
        self.clock = clock

    def sample(self) -> MemorySample:
        names = SAMPLE_FIELDS
        return MemorySample(
            t=self.clock.monotonic(),
            wired_bytes=None,
            used_bytes=None,
            total_bytes=None,
            free_share=None,
            swap_in_bytes=None,
            swap_out_bytes=None,
            missing={name: self.reason for name in names},
        )

    def swap_space(self) -> SwapSpace:
        return SwapSpace(None, None, reason=self.reason)


class PlatformProbes(msgspec.Struct, frozen=True):
    """The probes for one platform, plus what they were built from."""

    platform: str
    device: DeviceProbe
    memory: MemorySampler
    run: CommandRunner
    root: Path
    # the GPUs' per-process memory (NVML on Linux); None where the platform has none to list
    gpus: GpuProcessSource | None = None
    # readings beyond memory: temperatures, power, clocks, throttling (platforms.sensors)
    sensors: SensorSource | None = None

    @classmethod
    def detect(
        cls,
        platform: str = sys.platform,
        root: Path = Path("/"),
        run: CommandRunner | None = None,
        nvml: NvmlGpus | NoNvidiaDriver | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> PlatformProbes:
        runner = run if run is not None else SubprocessCommandRunner()
        family = platform_family(platform)
        device: DeviceProbe
        memory: MemorySampler
        gpu_processes: GpuProcessSource | None = None
        nvidia: NvmlGpus | NoNvidiaDriver | None = None
        if family == "linux":
            gpus = nvml if nvml is not None else gpus_for(root)
            device = detect_device(platform, root, runner, gpus)
            memory = LinuxMemorySampler(root, gpus, clock)
            gpu_processes = nvidia = gpus
        elif family == "darwin":
            device = detect_device(platform, root, runner)
            memory = DarwinMemorySampler(runner, clock)
        else:
            device = detect_device(platform, root, runner)
            memory = UnsupportedMemorySampler(platform, clock)
        sensors = sensors_for(family, root, runner, nvidia)
        return cls(family, device, memory, runner, root, gpu_processes, sensors)

    def production_footprint(
        self,
        production_url: str,
        default_port: int,
        process_names: Sequence[str] = (),
        markers: Sequence[str] = (),
        clock: Clock = SYSTEM_CLOCK,
    ) -> ProductionFootprint:
        """What the production runner's process tree holds on this machine, read per call.
        `default_port` and `process_names` are the runner kind's, `markers` every kind's
        (`runners.registry.runner_markers`)."""
        return ProductionFootprint(
            production_url, default_port, process_names, markers, self.platform, self.gpus, clock
        )

    def service_parallelism(
        self, unit: str, settings: Mapping[str, str] | None = None
    ) -> RunnerParallelism:
        """How to give an Ollama service N slots of W tokens, and the other `settings` it was
        measured with, on this platform: the macOS app, the systemd `unit`, else a note for the
        operator."""
        if self.platform == "darwin":
            return MacOSAppParallelism(self.run, settings=settings)
        if self.platform == "linux" and (self.root / SYSTEMD_BOOTED).is_dir():
            return SystemdParallelism(self.run, self.root, unit=unit, settings=settings)
        why = (
            "this host does not run systemd, so no drop-in is written"
            if self.platform == "linux"
            else f"{self.platform} is not managed by this tool"
        )
        return ManualParallelism(
            lambda n, w: (
                f"set {NUM_PARALLEL}={n} and {CONTEXT_LENGTH}={w} in the "
                f"environment of `ollama serve` and restart it ({why})"
            )
        )

"""PlatformProbes: with `support`, the one place that names an operating system.

`PlatformProbes.detect()` picks the device probe, the memory sampler and the way to set the
production runner's parallelism for this OS. An OS without an implementation still gets probes:
their readings are None with the reason "unsupported platform: X".
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.identity import DeviceFacts
from ..process.commands import SubprocessCommandRunner
from ..support import platform_family as platform_family  # also asked for from here
from ..support import this_platform as this_platform
from .readings import SwapSpace

if TYPE_CHECKING:
    from ...interfaces.readings import SensorSource
    from ...interfaces.samples import MemorySample
    from ...interfaces.slots_interface import CommandRunner, DeviceProbe, RunnerParallelism
    from ..nvidia import NoNvidiaDriver, NvmlGpus
    from .footprint import GpuProcessSource, ProductionFootprint

# Each platform's module is imported only on that platform, and the parallelism setters only
# when asked for: `slots allowed` builds probes on every call.

# present exactly when systemd is the init system (sd_booted(3))
SYSTEMD_BOOTED = "run/systemd/system"
DEVICE_FIELDS = (
    "hardware_model",
    "processor",
    "memory_bytes",
    "memory_limit_bytes",
    "accelerators",
    "os_name",
    "os_version",
)
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


class UnsupportedDeviceProbe:
    def __init__(self, platform: str) -> None:
        self.reason = f"unsupported platform: {platform}"

    def describe(self) -> DeviceFacts:
        names = DEVICE_FIELDS
        return DeviceFacts(
            hardware_model=None,
            processor=None,
            memory_bytes=None,
            accelerators=(),
            os_name=None,
            os_version=None,
            missing={name: self.reason for name in names},
        )


class UnsupportedMemorySampler:
    def __init__(self, platform: str, clock: Clock = SYSTEM_CLOCK) -> None:
        self.reason = f"unsupported platform: {platform}"
        self.clock = clock

    def sample(self) -> MemorySample:
        from ...interfaces.samples import MemorySample

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


def detect_device(
    platform: str = sys.platform,
    root: Path = Path("/"),
    run: CommandRunner | None = None,
    nvml: NvmlGpus | NoNvidiaDriver | None = None,
) -> DeviceProbe:
    """The device probe `PlatformProbes.detect` builds, alone: what a fingerprint is made of,
    without the memory sampler and the sensors that `slots allowed` never reads."""
    runner = run if run is not None else SubprocessCommandRunner()
    family = platform_family(platform)
    if family == "linux":
        from ..nvidia import gpus_for
        from .linux import LinuxDeviceProbe

        return LinuxDeviceProbe(root, nvml if nvml is not None else gpus_for(root), runner)
    if family == "darwin":
        from .darwin import DarwinDeviceProbe

        return DarwinDeviceProbe(runner)
    return UnsupportedDeviceProbe(platform)


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
            from ..nvidia import gpus_for
            from .linux import LinuxMemorySampler

            gpus = nvml if nvml is not None else gpus_for(root)
            device = detect_device(platform, root, runner, gpus)
            memory = LinuxMemorySampler(root, gpus, clock)
            gpu_processes = nvidia = gpus
        elif family == "darwin":
            from .darwin import DarwinMemorySampler

            device = detect_device(platform, root, runner)
            memory = DarwinMemorySampler(runner, clock)
        else:
            device = detect_device(platform, root, runner)
            memory = UnsupportedMemorySampler(platform, clock)
        from ..sensors.combined import sensors_for

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
        from .footprint import ProductionFootprint

        return ProductionFootprint(
            production_url, default_port, process_names, markers, self.platform, self.gpus, clock
        )

    def service_parallelism(
        self, unit: str, settings: Mapping[str, str] | None = None
    ) -> RunnerParallelism:
        """How to give an Ollama service N slots of W tokens, and the other `settings` it was
        measured with, on this platform: the macOS app, the systemd `unit`, else a note for the
        operator."""
        from ..parallelism import (
            CONTEXT_LENGTH,
            NUM_PARALLEL,
            MacOSAppParallelism,
            ManualParallelism,
            SystemdParallelism,
        )

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

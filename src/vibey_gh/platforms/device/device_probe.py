"""The device probe alone: what a fingerprint is made of, for this OS.

`slots allowed` builds this and nothing else of `probes` (no memory sampler, sensors or process
footprint), on every decision that reads evidence.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...interfaces.identity import DeviceFacts
from ..nvidia import NoNvidiaDriver, NvmlGpus, gpus_for
from ..process.commands import SubprocessCommandRunner
from ..support import platform_family
from .linux import LinuxDeviceProbe

if TYPE_CHECKING:
    from ...interfaces.slots_interface import CommandRunner, DeviceProbe

DEVICE_FIELDS = (
    "hardware_model",
    "processor",
    "memory_bytes",
    "memory_limit_bytes",
    "accelerators",
    "os_name",
    "os_version",
)


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
        return LinuxDeviceProbe(root, nvml if nvml is not None else gpus_for(root), runner)
    if family == "darwin":
        # lazy: macOS's probe only on macOS; it loads what the Linux gate never reads
        from .darwin import DarwinDeviceProbe

        return DarwinDeviceProbe(runner)
    return UnsupportedDeviceProbe(platform)

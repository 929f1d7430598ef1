"""The seams of vibey-gh slots: small Protocols and the result types that cross them.

Every platform and runner detail lives behind one of these. Implementations sit in
`platforms/` and `runners/`; `platforms/device/probes.py` is the one place that names an OS and
`runners/registry.py` the one place that names a runner kind. The runner protocols themselves
(a kind, a started runner, a chat client, a production watch) are in `runners/contract.py`;
the data they exchange that code below `runners/` needs too is here.

The result types that `slots allowed` needs live in small modules beside this one (`identity`,
`samples`, `turns`) and are re-exported here. Code on that command's path imports them from
there and names the Protocols only for type checking: creating a dataclass costs about a
millisecond, and the command has a 100 ms budget.

A missing reading is `None` with a reason in the result's `missing` map, never a silent zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import msgspec
from msgspec import field

from .identity import Accelerator, DeviceFacts, RunnerInfo
from .samples import GpuMemory, MemorySample
from .turns import REFUSED_OVER_WINDOW, SERVED_REASONS, ToolCall, TurnResult

__all__ = [
    "REFUSED_OVER_WINDOW",
    "SERVED_REASONS",
    "Accelerator",
    "ChatSettings",
    "CommandRunner",
    "DeviceFacts",
    "DeviceProbe",
    "GpuMemory",
    "HostMemorySampler",
    "MemorySample",
    "PlannedAction",
    "ProductionState",
    "RunnerInfo",
    "RunnerLaunch",
    "RunnerParallelism",
    "ToolCall",
    "TurnResult",
]


# ---------------------------------------------------------------------------------------------
# Device and memory
# ---------------------------------------------------------------------------------------------


class DeviceProbe(Protocol):
    def describe(self) -> DeviceFacts: ...


class HostMemorySampler(Protocol):
    def sample(self) -> MemorySample: ...


# ---------------------------------------------------------------------------------------------
# Runners
# ---------------------------------------------------------------------------------------------


class ChatSettings(msgspec.Struct, frozen=True):
    """Deterministic request settings (design §5). `window` is the per-slot context.

    stream: ask for the answer as a stream and reassemble it, recording when its tokens came
    (a calibration's turns); a runner that answers otherwise fails the turn, naming itself.
    """

    window: int
    max_tokens: int = 768
    temperature: float = 0.0
    seed: int = 42
    timeout_s: float = 600.0
    stream: bool = False


class RunnerLaunch(msgspec.Struct, frozen=True):
    """How to start a runner: N slots of `window` tokens on 127.0.0.1:`port`."""

    slots: int
    window: int
    port: int
    model: str
    log_path: Path
    binary: str | None = None  # llama-server / ollama executable; None = find on PATH
    threads: int | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


class ProductionState(msgspec.Struct, frozen=True):
    """Whether the production runner holds a model right now.

    busy: True when it holds (or is loading) a model, False when idle, None when unknown.
    models: the names it holds. version: its version where it says. reason: for None/errors.
    """

    reachable: bool
    busy: bool | None
    models: tuple[str, ...] = ()
    version: str | None = None
    reason: str | None = None


# ---------------------------------------------------------------------------------------------
# Production parallelism (slots apply)
# ---------------------------------------------------------------------------------------------


class PlannedAction(msgspec.Struct, frozen=True):
    """One step `slots apply` would take: a command to run or a file to write."""

    description: str
    argv: tuple[str, ...] = ()
    path: Path | None = None
    content: str | None = None


class CommandRunner(Protocol):
    """Runs argv without a shell; injected so tests record instead of executing."""

    def run(self, argv: tuple[str, ...]) -> tuple[int, str]: ...


class RunnerParallelism(Protocol):
    def plan(self, slots: int, window: int) -> list[PlannedAction]: ...

    def apply(self, actions: list[PlannedAction]) -> None: ...

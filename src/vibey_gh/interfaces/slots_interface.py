"""The seams of vibey-gh slots: small Protocols and the result types that cross them.

Every platform and runner detail lives behind one of these. Implementations sit in
`platforms/` and `runners/`; `platforms/probes.py` is the one place that names an OS and
`runners/registry.py` the one place that names a runner kind.

A missing reading is `None` with a reason in the result's `missing` map, never a silent zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

# Done/finish reasons that make a turn "served" (design §5).
SERVED_REASONS = frozenset({"stop", "length", "tool_calls"})

# The failure reason every adapter uses for a prompt longer than the slot's window.
REFUSED_OVER_WINDOW = "refused: over window"


# ---------------------------------------------------------------------------------------------
# Device and memory
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accelerator:
    """One GPU or other accelerator. `memory_bytes` is None where the platform does not say."""

    name: str
    memory_bytes: int | None = None
    kind: str = "gpu"  # "gpu" (discrete, own memory) or "integrated" (shares host memory)
    index: int = 0


@dataclass(frozen=True)
class DeviceFacts:
    """What one machine is, as far as the fingerprint cares.

    Fields:
      hardware_model: vendor model string (Mac17,2; DMI product_name) or None.
      processor: CPU brand string.
      memory_bytes: physical memory.
      memory_limit_bytes: a cgroup memory limit below physical memory, else None.
      accelerators: GPUs, ordered by index.
      os_name / os_version: "macOS" "26.6.2", "Debian GNU/Linux" "12", ...
      sources: field name -> where the value came from ("sysctl hw.model", "/proc/meminfo").
      missing: field name -> why it is None.
    """

    hardware_model: str | None
    processor: str | None
    memory_bytes: int | None
    accelerators: tuple[Accelerator, ...]
    os_name: str | None
    os_version: str | None
    memory_limit_bytes: int | None = None
    sources: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def memory_budget_bytes(self) -> int | None:
        """The memory the ceiling is a fraction of: the cgroup limit where lower, else physical."""
        if self.memory_limit_bytes is not None and self.memory_bytes is not None:
            return min(self.memory_limit_bytes, self.memory_bytes)
        return self.memory_limit_bytes if self.memory_bytes is None else self.memory_bytes


@dataclass(frozen=True)
class GpuMemory:
    index: int
    name: str
    used_bytes: int | None
    total_bytes: int | None


@dataclass(frozen=True)
class MemorySample:
    """One 1 Hz reading of the host.

    Fields:
      t: monotonic seconds (same clock as turn timestamps).
      wired_bytes: memory that cannot be paged out (macOS wired; Linux: total - available,
        or the cgroup's current usage when under a limit).
      used_bytes: memory in use by everything.
      total_bytes: physical memory (or the cgroup limit where lower).
      free_share: 0..1, the share the platform calls free/available.
      swap_in_bytes / swap_out_bytes: cumulative counters since boot (rates are derived).
      gpus: per-GPU memory where NVML is present.
      missing: field -> reason for every None above.
    """

    t: float
    wired_bytes: int | None
    used_bytes: int | None
    total_bytes: int | None
    free_share: float | None
    swap_in_bytes: int | None
    swap_out_bytes: int | None
    gpus: tuple[GpuMemory, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)


class DeviceProbe(Protocol):
    def describe(self) -> DeviceFacts: ...


class HostMemorySampler(Protocol):
    def sample(self) -> MemorySample: ...


# ---------------------------------------------------------------------------------------------
# Runners
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatSettings:
    """Deterministic request settings (design §5). `window` is the per-slot context."""

    window: int
    max_tokens: int = 768
    temperature: float = 0.0
    seed: int = 42
    timeout_s: float = 600.0


@dataclass(frozen=True)
class TurnResult:
    """What one request gave back, as raw as possible; metrics are computed from it later.

    Fields:
      status: HTTP status, or None when no response arrived (timeout, connection refused).
      finish_reason: done_reason (Ollama) / finish_reason (OpenAI), None when absent.
      prompt_tokens / output_tokens: as the runner counted them, None when not reported.
      text: the answer text ("" for a pure tool call or a failure).
      tool_calls: the tool calls, in order.
      started / ended: monotonic seconds around the request.
      error: why the turn failed (None when served), e.g. "refused: over window",
        "http 500: error parsing tool call", "no done reason", "timeout after 600s".
    """

    status: int | None
    finish_reason: str | None
    prompt_tokens: int | None
    output_tokens: int | None
    text: str
    tool_calls: tuple[ToolCall, ...]
    started: float
    ended: float
    error: str | None = None

    @property
    def served(self) -> bool:
        return self.status == 200 and self.finish_reason in SERVED_REASONS and self.error is None

    @property
    def latency_s(self) -> float:
        return self.ended - self.started

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "text": self.text,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "started": self.started,
            "ended": self.ended,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnResult:
        return cls(
            status=data.get("status"),
            finish_reason=data.get("finish_reason"),
            prompt_tokens=data.get("prompt_tokens"),
            output_tokens=data.get("output_tokens"),
            text=data.get("text") or "",
            tool_calls=tuple(
                ToolCall(str(c["name"]), dict(c.get("arguments") or {}))
                for c in data.get("tool_calls") or []
            ),
            started=float(data["started"]),
            ended=float(data["ended"]),
            error=data.get("error"),
        )


@dataclass(frozen=True)
class RunnerInfo:
    """Identity of a running runner, for the fingerprint and the version check.

    kind: "embedded" | "llama-server" | "ollama"; version: the runner's own version string;
    model: the model name or path; model_digest: Ollama manifest digest or GGUF sha256.
    """

    kind: str
    version: str | None
    model: str
    model_digest: str | None
    missing: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunnerLaunch:
    """How to start a runner: N slots of `window` tokens on 127.0.0.1:`port`."""

    slots: int
    window: int
    port: int
    model: str
    log_path: Path
    binary: str | None = None  # llama-server / ollama executable; None = find on PATH
    threads: int | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class RunningRunner(Protocol):
    """A started runner.

    Lifecycle: Runner.start() -> wait_ready() -> preload() -> chat()* -> stop().
    """

    base_url: str
    log_path: Path

    @property
    def pid(self) -> int | None: ...

    def wait_ready(self, timeout_s: float = 120.0) -> None: ...

    def preload(self) -> float:
        """Load the model before the clock starts; return the seconds it took."""
        ...

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult: ...

    def info(self) -> RunnerInfo: ...

    def stop(self) -> None: ...


class Runner(Protocol):
    """A runner kind that can start a server of its own (the calibration runner)."""

    kind: str

    def start(self, launch: RunnerLaunch) -> RunningRunner: ...


@dataclass(frozen=True)
class ProductionState:
    """Whether the production runner holds a model right now.

    busy: True when it holds (or is loading) a model, False when idle, None when unknown.
    models: the names it holds. version: its version where it says. reason: for None/errors.
    """

    reachable: bool
    busy: bool | None
    models: tuple[str, ...] = ()
    version: str | None = None
    reason: str | None = None


class ProductionWatch(Protocol):
    def poll(self) -> ProductionState: ...


# ---------------------------------------------------------------------------------------------
# Production parallelism (slots apply)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedAction:
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

"""What a fingerprint is made of: the device and the runner serving the model.

A missing reading is `None` with a reason in the result's `missing` map, never a silent zero.
"""

from __future__ import annotations

import msgspec
from msgspec import field


class Accelerator(msgspec.Struct, frozen=True):
    """One GPU or other accelerator. `memory_bytes` is None where the platform does not say."""

    name: str
    memory_bytes: int | None = None
    kind: str = "gpu"  # "gpu" (discrete, own memory) or "integrated" (shares host memory)
    index: int = 0


class DeviceFacts(msgspec.Struct, frozen=True):
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


class RunnerInfo(msgspec.Struct, frozen=True):
    """Identity of a running runner, for the fingerprint and the version check.

    kind: "embedded" | "llama-server" | "ollama"; version: the runner's own version string;
    model: the model name or path; model_digest: Ollama manifest digest or GGUF sha256.
    settings: production's own runner settings that evidence is keyed to (llama-server's
    runner_args, Ollama's OLLAMA_* variables; empty for none), read from `settings_source`.
    serving_slots: the parallel slots production serves now, where it says (None: unknown).
    """

    kind: str
    version: str | None
    model: str
    model_digest: str | None
    missing: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    settings_source: str | None = None
    serving_slots: int | None = None


# A build made without git metadata (llama.cpp from a source archive: "b0-unknown") or a
# development build (Ollama built without its release flags says "0.0.0") names no build: two
# such builds would share a fingerprint, so the version is keyed by the binary's own sha256 as
# well.
NAMELESS_BUILDS = frozenset({"", "dev", "unknown", "none", "b0", "b0-unknown", "0.0.0"})
BINARY_MARK = "+sha256:"
BINARY_DIGEST_SHOWN = 16


def names_no_build(version: str | None) -> bool:
    if version is None or BINARY_MARK in version:
        return False  # no version at all is refused on its own (`missing`); keyed already
    text = version.strip().lower()
    return (
        text in NAMELESS_BUILDS or text.startswith(("b0-", "0.0.0-", "0.0.0+")) or "unknown" in text
    )


def nameless_part(version: str | None) -> str | None:
    """The version the binary gave, when `version` was keyed to its binary; else None."""
    if version is None or BINARY_MARK not in version:
        return None
    return version.split(BINARY_MARK, 1)[0]

"""Memory charged for production at N: the machine's figures minus what production holds now.

Calibrating beside a production runner that keeps its model loaded, the machine holds both
runners; production at N slots would replace its current footprint, not add to it (design §5,
Bounds). So each 1 Hz sample is charged as:
  host: wired (or used) − production's counted resident memory;
  GPU:  per device, used − production's per-process GPU memory, as a share of the device.
Where production's footprint is unknown, nothing is left out (everything is charged), as before.
Raw samples stay in samples.jsonl and the timeline; the charged ones feed the bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from msgspec.structs import replace

from ....errors import Refused
from ....interfaces.samples import GpuMemory, MemorySample

GB = 1_000_000_000


class FootprintSource(Protocol):
    """What production holds now (platforms.footprint.ProductionFootprint)."""

    def read(self) -> ProductionHeld: ...


class ProductionHeld(Protocol):
    @property
    def host_bytes(self) -> int | None: ...

    @property
    def gpu_bytes(self) -> dict[int, int | None] | None: ...

    @property
    def how(self) -> str: ...


def charged_bytes(raw: int | None, production: int | None) -> int | None:
    """raw − production, never below zero; raw itself where production is unknown."""
    if raw is None or production is None:
        return raw
    return max(0, raw - production)


def charged_gpus(
    gpus: tuple[GpuMemory, ...], production: dict[int, int | None] | None
) -> tuple[GpuMemory, ...]:
    held = production or {}
    return tuple(
        replace(g, used_bytes=charged_bytes(g.used_bytes, held.get(g.index))) for g in gpus
    )


def charge_sample(sample: MemorySample, held: ProductionHeld | None) -> MemorySample:
    """The sample as production at N would see it: production's footprint left out."""
    if held is None:
        return sample
    return replace(
        sample,
        wired_bytes=charged_bytes(sample.wired_bytes, held.host_bytes),
        used_bytes=charged_bytes(sample.used_bytes, held.host_bytes),
        gpus=charged_gpus(sample.gpus, held.gpu_bytes),
    )


@dataclass
class FootprintSummary:
    """Production's footprint over a step: the largest seen, per host and per GPU, and how it
    was identified (each distinct account, in order)."""

    host_bytes: int | None = None
    gpu_bytes: dict[int, int | None] | None = None
    accounts: list[str] = field(default_factory=list)

    def add(self, held: ProductionHeld) -> None:
        if held.how not in self.accounts:
            self.accounts.append(held.how)
        if held.host_bytes is not None:
            self.host_bytes = max(self.host_bytes or 0, held.host_bytes)
        if held.gpu_bytes is not None:
            merged = dict(self.gpu_bytes or {})
            for index, value in held.gpu_bytes.items():
                before = merged.get(index, 0)
                merged[index] = None if value is None or before is None else max(before, value)
            self.gpu_bytes = merged

    def gpu_tuple(self) -> tuple[int | None, ...] | None:
        if self.gpu_bytes is None:
            return None
        return tuple(self.gpu_bytes[i] for i in sorted(self.gpu_bytes))

    @property
    def how(self) -> str | None:
        return "; then ".join(self.accounts) or None


def check_fits_beside_production(
    held: ProductionHeld,
    sample: MemorySample,
    model_bytes: int | None,
    model: str,
) -> None:
    """Refuse before the first step when production holds GPU memory and the calibration
    runner's model cannot fit in what is free beside it (free below the model file's size).

    Free memory is summed over the GPUs: llama.cpp and Ollama split a model across devices.
    """
    if model_bytes is None or not held.gpu_bytes:
        return
    production_gpu = {i: b for i, b in held.gpu_bytes.items() if b}
    if not production_gpu:
        return
    measured = [g for g in sample.gpus if g.used_bytes is not None and g.total_bytes]
    if not measured:
        return
    free = sum(max(0, (g.total_bytes or 0) - (g.used_bytes or 0)) for g in measured)
    if free >= model_bytes:
        return
    holds = ", ".join(f"{b / GB:.2f} GB on GPU {i}" for i, b in sorted(production_gpu.items()))
    raise Refused(
        f"the calibration model {model} ({model_bytes / GB:.2f} GB) cannot fit beside "
        f"production: {free / GB:.2f} GB of GPU memory is free and the production runner "
        f"holds {holds}. Free the room first: stop the production runner for the calibration, "
        "or run production with its model partly on the CPU (fewer GPU layers), or stop "
        "whatever else holds GPU memory"
    )


def footprint_sampler(
    source: FootprintSource | None,
) -> tuple[Callable[[], ProductionHeld | None], FootprintSummary]:
    """A reader for the sampler's tick and the summary it fills."""
    summary = FootprintSummary()

    def read() -> ProductionHeld | None:
        if source is None:
            return None
        held = source.read()
        summary.add(held)
        return held

    return read, summary

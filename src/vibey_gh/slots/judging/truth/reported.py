"""What a runner said of itself at start-up, from its log events, and whether that is what it
was asked for.

A runner can quietly serve something else than asked: Ollama forces one slot for some model
families, llama-server picks its own slot count when -np is missing, a unified KV cache shares
the window. Evidence measured on such a runner is about another configuration, so a step whose
runner reports other slots or another window than asked breaks a bound (`judge`).
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import fields, replace

from ..records import LogEventRecord, RunnerReported

MIB = 1 << 20
# llama.cpp may round a slot's context up to a multiple of this; that is still the window asked.
WINDOW_PADDING = 256


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def runner_reported_from(events: Iterable[LogEventRecord]) -> RunnerReported | None:
    """The start-up facts among `events` (the last line of each kind wins: the server's own
    slot line comes after the library's); None when the log said none of them."""
    slots: int | None = None
    window: int | None = None
    kv_bytes: int | None = None
    gpu_layers: int | None = None
    layers: int | None = None
    buffers: dict[str, float] = {}
    fallback_device: str | None = None
    disabled = False
    for event in events:
        values = event.values
        size_mib = values.get("size_mib")
        if event.kind == "slots" and (count := _whole(values.get("n_slots"))) is not None:
            slots = count
        elif event.kind == "slot_window" and (count := _whole(values.get("n_ctx"))) is not None:
            window = count
        elif event.kind == "kv_cache" and isinstance(size_mib, int | float):
            size = float(size_mib) * MIB
            if "device" in values:  # Ollama's summary: one line per device
                buffers[f"summary {values['device']}"] = size
            else:
                kv_bytes = round(size)
        elif event.kind == "kv_buffer" and isinstance(size_mib, int | float):
            buffers[str(values.get("device"))] = float(size_mib) * MIB
        elif event.kind == "gpu_layers":
            gpu_layers, layers = _whole(values.get("gpu_layers")), _whole(values.get("layers"))
        elif event.kind == "attention_fallback":
            disabled = disabled or bool(values.get("disabled"))
            fallback_device = str(values.get("device") or fallback_device or "") or None
    fallback = fallback_device
    if disabled:  # llama.cpp switches flash attention off when it may not run beside the layers
        fallback = "disabled" + (f" (assigned to {fallback_device})" if fallback_device else "")
    if kv_bytes is None and buffers:
        kv_bytes = round(sum(buffers.values()))
    reported = RunnerReported(slots, window, kv_bytes, gpu_layers, layers, fallback)
    return None if reported == RunnerReported() else reported


def fill_in(first: RunnerReported | None, later: RunnerReported | None) -> RunnerReported | None:
    """`first`, with what it lacks taken from `later` (lines logged after the start-up)."""
    if first is None or later is None:
        return first or later
    missing = {
        f.name: getattr(later, f.name) for f in fields(first) if getattr(first, f.name) is None
    }
    return replace(first, **missing)


def runner_mismatch(slots: int, window: int, reported: RunnerReported | None) -> str | None:
    """Why the runner is not set up as asked, or None (also when it did not say)."""
    if reported is None:
        return None
    if reported.slots is not None and reported.slots != slots:
        return f"runner reported {reported.slots} slot(s), not the {slots} asked"
    padded = -(-window // WINDOW_PADDING) * WINDOW_PADDING
    if reported.window is not None and not window <= reported.window <= padded:
        return f"runner reported a {reported.window}-token window, not the {window} asked"
    return None


def describe(reported: RunnerReported | None) -> str:
    """One line for reports: "2 slots × 1024 tokens, KV cache 45.0 MiB, 30/31 layers on a GPU"."""
    if reported is None:
        return "not recorded"
    slots = "?" if reported.slots is None else str(reported.slots)
    window = "?" if reported.window is None else str(reported.window)
    parts = [f"{slots} slot(s) × {window} tokens"]
    if reported.kv_cache_bytes is not None:
        parts.append(f"KV cache {reported.kv_cache_bytes / MIB:.1f} MiB")
    if reported.gpu_layers is not None:
        of = "" if reported.layers is None else f"/{reported.layers}"
        parts.append(f"{reported.gpu_layers}{of} layers on a GPU")
    if reported.attention_fallback and reported.attention_fallback.startswith("disabled"):
        parts.append(f"flash attention {reported.attention_fallback}")
    elif reported.attention_fallback is not None:
        parts.append(f"flash attention on {reported.attention_fallback}")
    return ", ".join(parts)

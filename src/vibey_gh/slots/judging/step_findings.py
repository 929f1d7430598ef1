"""What one step's figures break, bound by bound: memory, swap, the runner's setup; and the
short name a verdict's label gives each finding."""

from __future__ import annotations

from ...interfaces.bounds import Bounds
from .figures import BaselineFigures, StepFigures, StepMetrics
from .latencies.latency_bounds import LATENCY_BOUND_KEYS

GB = 1_000_000_000


def memory_findings(step: StepFigures, bounds: Bounds) -> list[str]:
    findings = []
    metrics, budget = step.metrics, step.memory_budget_bytes
    if metrics.peak_wired_bytes is None or budget is None:
        findings.append("wired memory not measured")
    else:
        ceiling = bounds.wired_ceiling * budget
        if metrics.peak_wired_bytes > ceiling:
            findings.append(
                f"peak wired {metrics.peak_wired_bytes / GB:.2f} GB above the ceiling "
                f"{ceiling / GB:.2f} GB"
            )
    if metrics.peak_gpu_share is not None and metrics.peak_gpu_share > bounds.wired_ceiling:
        findings.append(
            f"GPU memory {metrics.peak_gpu_share:.0%} above the ceiling {bounds.wired_ceiling:.0%}"
        )
    return findings


def swap_finding(metrics: StepMetrics, baseline: BaselineFigures, bounds: Bounds) -> str | None:
    if metrics.swap_out_mb_per_min is None:
        return "swap not measured"
    limit = baseline.swap_limit(bounds)
    if metrics.swap_out_mb_per_min > limit:
        return f"swap-out {metrics.swap_out_mb_per_min:.1f} MB/min above {limit:.1f} MB/min"
    return None


def runner_finding(step: StepFigures) -> str | None:
    """A runner set up otherwise than asked measured another configuration: that breaks a
    bound whatever the bounds say (at one slot, the floor, it is a warning)."""
    return step.runner_mismatch


def short_name(finding: str) -> str:
    """The bound a finding breaks, as a verdict's label names it ("breaks memory")."""
    if finding.startswith(LATENCY_BOUND_KEYS):
        return finding.split(":", 1)[0]
    if finding.startswith("fidelity"):
        return "fidelity"
    if "wired" in finding or "GPU" in finding:
        return "memory"
    if finding.startswith("swap"):
        return "swap"
    if "served at one slot failed" in finding:
        return "served turns"
    if finding.startswith("log:"):
        return finding.split("× ", 1)[-1]
    if finding.startswith("runner reported"):
        return "runner setup"
    return "done reasons"

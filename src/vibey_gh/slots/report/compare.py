"""`slots compare A B …`: two or more sweeps side by side.

Each argument is a fingerprint (its evidence in the state dir) or an evidence file (one a
calibration wrote with --out, or a colleague sent). Every sweep is re-judged against today's
bounds, as `allowed` would judge it. The comparison gives one row per step name (N=1, N=1
again, N=2, …) with each sweep's throughput and verdict, each sweep's decision, and what
differs between each sweep's fingerprint and the first one's: the device, the runner, the
model, the window. An unknown fingerprint or a file that is not readable evidence is bad input.

The throughput compared is the figure the sweeps were decided on: runs per hour when every
sweep replayed whole runs, turns per hour when every one replayed segments. Sweeps decided on
different figures are compared on turns per hour, the one figure every sweep measured, and the
comparison says so (`note`): a run per hour of one corpus is not a turn per hour of another.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ...errors import BadInput, EvidenceError
from ...files import PRIVATE_FILE, atomic_write_shared_bytes
from ...interfaces.bounds import Bounds
from ...state import StateLayout
from ..evidence.fingerprint import describe_differences
from ..evidence.store import Evidence, evidence_path, load_evidence
from ..gate.judged import judge_evidence
from ..judging.figures import RUNS_PER_HOUR, TURNS_PER_HOUR, StepMetrics
from ..judging.judge import SweepJudgement
from ..judging.truth.refusals import Refusals, refusals_of
from .plotting import plots as plot_module  # its plots_available is read when asked
from .plotting.plot_parts import new_figure, plot_title
from .plotting.plots import figure_png
from .tables.split_window import is_split_window
from .tables.step_table import step_rows

FINGERPRINT = re.compile(r"[0-9a-f]{16}")


if TYPE_CHECKING:
    from matplotlib.figure import Figure


class ComparedSweep(msgspec.Struct, frozen=True):
    """One sweep of the comparison: where it came from, and how it judges today."""

    label: str
    path: Path
    evidence: Evidence
    judgement: SweepJudgement

    @property
    def decided_by(self) -> str:
        """The figure this sweep was decided on: runs/h (whole runs) or turns/h (segments)."""
        return self.judgement.figures.decided_by

    def steps(self, figure: str = TURNS_PER_HOUR) -> dict[str, tuple[float | None, str]]:
        """Step name → (its `figure`, runs or turns per hour, and its verdict)."""
        rows = step_rows(self.evidence.steps, self.judgement)
        return {
            row[0]: (_figure_of(verdict.metrics, figure), verdict.label)
            for row, verdict in zip(rows, self.judgement.verdicts, strict=True)
        }

    @property
    def what_if(self) -> dict[str, Refusals] | None:
        """Step name → served and refused turns, for a split-window what-if; else None."""
        if not is_split_window(self.evidence):
            return None
        rows = step_rows(self.evidence.steps, self.judgement)
        return {
            row[0]: refusals_of(step) for row, step in zip(rows, self.evidence.steps, strict=True)
        }

    def output(self, figure: str = TURNS_PER_HOUR) -> SweepCompared:
        """The sweep as `compare --json` answers it, its steps' `compared` in `figure`."""
        steps = tuple(
            ComparedStep(name, turns, runs, turns if figure == TURNS_PER_HOUR else runs, label)
            for (name, (turns, label)), (runs, _) in zip(
                self.steps(TURNS_PER_HOUR).items(), self.steps(RUNS_PER_HOUR).values(), strict=True
            )
        )
        return SweepCompared(
            self.decided_by, self.what_if, self.evidence.fingerprint, self.path,
            dict(self.evidence.fingerprint_fields), self.judgement.ideal, self.judgement.reason,
            steps,
        )  # fmt: skip


class ComparedStep(msgspec.Struct, frozen=True):
    step: str
    turns_per_hour: float | None
    runs_per_hour: float | None
    compared: float | None  # of the two, the figure the comparison is on
    verdict: str


class SweepCompared(msgspec.Struct, frozen=True):
    """One sweep in `slots compare --json` (written by `as_json`)."""

    decided_by: str
    split_window: dict[str, Refusals] | None  # a split-window what-if's served and refused
    fingerprint: str
    path: Path
    fields: dict[str, object]
    ideal: int | None
    reason: str
    steps: tuple[ComparedStep, ...]


class Difference(msgspec.Struct, frozen=True):
    against: str  # the first sweep's fingerprint
    of: str  # the sweep's label
    differs: list[str]


class ComparisonOutput(msgspec.Struct, frozen=True):
    """`slots compare --json` (written by `as_json`)."""

    compared_on: str
    note: str
    sweeps: tuple[SweepCompared, ...]
    differences: tuple[Difference, ...]


class Comparison(msgspec.Struct, frozen=True):
    sweeps: tuple[ComparedSweep, ...]

    @property
    def figure(self) -> str:
        """The figure compared: the one every sweep was decided on, else turns/h."""
        decided = {s.decided_by for s in self.sweeps}
        return decided.pop() if len(decided) == 1 else TURNS_PER_HOUR

    @property
    def note(self) -> str:
        """One sentence on the figure compared, and why when the sweeps differ."""
        if all(s.decided_by == self.figure for s in self.sweeps):
            return f"compared on {self.figure}, the figure every sweep was decided on"
        each = ", ".join(f"{s.label} on {s.decided_by}" for s in self.sweeps)
        return (
            f"the sweeps were decided on different figures ({each}): compared on "
            f"{TURNS_PER_HOUR}, which every sweep measured; each decision stands on its own figure"
        )

    def step_names(self) -> list[str]:
        names: list[str] = []
        for sweep in self.sweeps:
            names += [name for name in sweep.steps() if name not in names]
        return sorted(names, key=_step_order)

    def differences(self) -> list[tuple[str, list[str]]]:
        """(label, what differs from the first sweep's fingerprint) for every other sweep."""
        first = self.sweeps[0].evidence.fingerprint_fields
        return [
            (s.label, describe_differences(first, s.evidence.fingerprint_fields))
            for s in self.sweeps[1:]
        ]

    def rows(self) -> list[list[str]]:
        """The side-by-side table: one row per step, then the decision."""
        rows = []
        figure = self.figure
        for name in self.step_names():
            row = [name]
            for sweep in self.sweeps:
                value, label = sweep.steps(figure).get(name, (None, ""))
                cell = "—" if not label else f"{_per_hour(value, figure)} ({label})"
                refusals = (sweep.what_if or {}).get(name)
                if refusals is not None:
                    cell += f"; what-if: {refusals.served} served, {refusals.refused} refused"
                    if refusals.shortest_refused_tokens is not None:
                        cell += f" (shortest {refusals.shortest_refused_tokens:,} tokens)"
                row.append(cell)
            rows.append(row)
        rows.append(["decision", *(f"ideal N = {s.judgement.ideal}" for s in self.sweeps)])
        return rows

    def lines(self) -> list[str]:
        """The table in aligned columns, then each decision and what differs (the terminal's
        `slots compare`)."""
        header = ["step", *(s.label for s in self.sweeps)]
        rows = [header, *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
        lines.append(self.note[0].upper() + self.note[1:] + ".")
        for sweep in self.sweeps:
            lines.append(f"{sweep.label}: ideal {sweep.judgement.ideal} — {sweep.judgement.reason}")
        first = self.sweeps[0].label
        for label, differs in self.differences():
            lines.append(f"{label} against {first}: " + (", ".join(differs) or "same fingerprint"))
        return lines

    def output(self) -> ComparisonOutput:
        """The comparison as `--json` answers it, with the differences between the sweeps."""
        first = self.sweeps[0].evidence.fingerprint
        return ComparisonOutput(
            self.figure,
            self.note,
            tuple(s.output(self.figure) for s in self.sweeps),
            tuple(Difference(first, label, d) for label, d in self.differences()),
        )


def _figure_of(metrics: StepMetrics, figure: str) -> float | None:
    """A step's runs or turns per hour; None for runs of a step that replayed segments."""
    if figure == RUNS_PER_HOUR:
        return metrics.runs_per_hour if metrics.on_runs else None
    return metrics.turns_per_hour


def _per_hour(value: float | None, figure: str) -> str:
    return "—" if value is None else f"{value:.1f} {figure}"


def _step_order(name: str) -> tuple[int, int]:
    slots = int(name.split("=", 1)[1].split()[0])
    return slots, 1 if name.endswith("again") else 0


def resolve(argument: str, layout: StateLayout) -> Path:
    """The evidence file an argument names: a fingerprint's in the state dir, or a path."""
    if FINGERPRINT.fullmatch(argument):
        path = evidence_path(layout, argument)
        if not path.is_file():
            raise BadInput(f"no evidence for fingerprint {argument} in {layout.evidence}")
        return path
    path = Path(argument).expanduser()
    if not path.is_file():
        raise BadInput(f"{argument}: neither a fingerprint (16 hex digits) nor an evidence file")
    return path


def compare(arguments: list[str], layout: StateLayout, bounds: Bounds) -> Comparison:
    if len(arguments) < 2:
        raise BadInput("compare needs at least two fingerprints or evidence files")
    sweeps = []
    for argument in arguments:
        path = resolve(argument, layout)
        try:
            evidence = load_evidence(path)
        except EvidenceError as exc:
            raise BadInput(f"{argument}: {exc}") from None
        label = argument if FINGERPRINT.fullmatch(argument) else path.name
        judgement = judge_evidence(evidence, bounds).judgement
        sweeps.append(ComparedSweep(label, path, evidence, judgement))
    return Comparison(tuple(sweeps))


def write_overlaid_throughput(comparison: Comparison, path: Path) -> Path:
    """One plot: every sweep's compared figure against slots, overlaid; written in one rename."""
    if not plot_module.plots_available():
        raise BadInput(
            f"--plot {path}: this install leaves out matplotlib; to plot, install it "
            "(pip install 'vibey-gh[plots]', or pipx inject vibey-gh matplotlib) and run "
            "this command again"
        )

    if not path.parent.is_dir():
        raise BadInput(f"--plot {path}: no such folder {path.parent}")
    if path.is_dir():
        raise BadInput(f"--plot {path}: is a folder")
    figure = overlaid_throughput_figure(comparison)
    try:
        atomic_write_shared_bytes(path, figure_png(figure), PRIVATE_FILE)
    except PermissionError:
        raise BadInput(f"--plot {path}: the folder is not writable") from None
    return path


def overlaid_throughput_figure(comparison: Comparison) -> Figure:
    """Every sweep's compared figure (runs or turns per hour) against slots."""
    figure, (ax,) = new_figure(1, 5.5, "Throughput against slots, compared")
    compared = comparison.figure
    for sweep in comparison.sweeps:
        points = [
            (v.slots, value)
            for v in sweep.judgement.verdicts
            if (value := _figure_of(v.metrics, compared)) is not None
        ]
        xs = [p[0] for p in points]
        ax.plot(xs, [p[1] for p in points], marker="o", label=plot_title(sweep.evidence))
    slots = sorted({v.slots for sweep in comparison.sweeps for v in sweep.judgement.verdicts})
    ax.set_xticks(slots)  # whole slot counts only: there is no N = 1.5
    ax.set_xlabel("slots (N parallel sequences)")
    ax.set_ylabel(
        "completed runs per hour (runs/h)"
        if compared == RUNS_PER_HOUR
        else "served turns per hour (turns/h)"
    )
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return figure


__all__ = [
    "ComparedSweep",
    "Comparison",
    "compare",
    "overlaid_throughput_figure",
    "resolve",
    "write_overlaid_throughput",
]

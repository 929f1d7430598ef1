"""`slots allowed --format openmetrics`: the answer as gauges an operator can scrape.

Four gauges in the OpenMetrics text format, each labelled with the fingerprint, the runner
kind, the model and the window the answer is for:

  vibey_gh_slots_allowed              runs that may start now
  vibey_gh_slots_ideal                the N the evidence supports (only with usable evidence)
  vibey_gh_evidence_age_seconds       how old that evidence is (only when it could be read)
  vibey_gh_calibration_requested      1 when the answer wrote a calibration request, else 0

A gauge without a value is left out rather than given a made-up one. `write_textfile` puts
the text where node-exporter's textfile collector reads it: written beside the target and
renamed over it, readable by other users (the collector usually runs as another one). Only a
regular file is ever replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from ...config import LocalModels, load_config
from ...errors import ConfigError, VibeyError
from ...files import atomic_write_shared_text
from ...platforms.storage.system_paths import check_new_output_file
from .allowed import AllowedAnswer

TEXTFILE_MODE = 0o644
GAUGES = (
    ("vibey_gh_slots_allowed", "Agent runs that may start now on this device (slots allowed)."),
    ("vibey_gh_slots_ideal", "Parallel runs the recorded evidence supports."),
    ("vibey_gh_evidence_age_seconds", "Age of the evidence the answer rests on."),
    ("vibey_gh_calibration_requested", "1 when a calibration was requested for this fingerprint."),
)


class MetricLabels(msgspec.Struct, frozen=True):
    """What the answer is about. Empty strings where it is not known (a config that does not
    parse names no runner)."""

    fingerprint: str
    runner: str
    model: str
    window: str

    def render(self) -> str:
        pairs = (
            ("fingerprint", self.fingerprint),
            ("runner", self.runner),
            ("model", self.model),
            ("window", self.window),
        )
        return ",".join(f'{name}="{_escape(value)}"' for name, value in pairs)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def openmetrics_text(answer: AllowedAnswer, labels: MetricLabels) -> str:
    """The answer as OpenMetrics text, ending with `# EOF`."""
    values: dict[str, float | None] = {
        "vibey_gh_slots_allowed": answer.allowed,
        "vibey_gh_slots_ideal": answer.ideal,
        "vibey_gh_evidence_age_seconds": answer.evidence_age_s,
        "vibey_gh_calibration_requested": 1 if answer.requested else 0,
    }
    lines: list[str] = []
    rendered = labels.render()
    for name, help_text in GAUGES:
        lines.append(f"# TYPE {name} gauge")
        lines.append(f"# HELP {name} {help_text}")
        value = values[name]
        if value is not None:
            lines.append(f"{name}{{{rendered}}} {_number(value)}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def check_textfile(path: Path) -> None:
    """Bad input (BadInput, exit 2), found before any work: a missing folder, a path in a
    kernel file system, or something other than a regular file in the way."""
    check_new_output_file(path, "--textfile")


def write_textfile(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename. Bad input raises BadInput; a file system that
    refuses the write (read-only, full, not writable by us) raises OSError, which the caller
    reports as a warning: the answer itself is still good."""
    check_textfile(path)
    atomic_write_shared_text(path, text, TEXTFILE_MODE)


def textfile_warning(path: Path, metrics: str) -> str | None:
    """Write the gauges to `path`; what went wrong as a warning, else None. A --textfile that
    cannot take them (a path in /proc, a FIFO or a folder in the way, a read-only or full file
    system) is a warning: the answer is printed and the exit code stays 0, because scripts
    gate their runs on it."""
    try:
        write_textfile(path, metrics)
    except (OSError, VibeyError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        why = why.removeprefix(f"--textfile {path} ").removeprefix(f"{path} ")
        return f"warning: --textfile {path} was not written ({why}); the answer is unaffected"
    return None


def answer_with_labels(
    model: str | None,
    window: int | None,
    answer_asked: Callable[[str | None, int | None], AllowedAnswer],
    decide: Callable[[LocalModels], AllowedAnswer],
) -> tuple[AllowedAnswer, MetricLabels]:
    """The answer, and the labels of what it is about (the config's, when it parses)."""
    try:
        config = load_config().with_overrides(model=model, window=window)
    except ConfigError:
        answer = answer_asked(model, window)  # 1, the error
        return answer, MetricLabels("", "", model or "", str(window or ""))
    answer = decide(config)
    labels = MetricLabels(answer.fingerprint or "", config.runner, config.model, str(config.window))
    return answer, labels


def answer_with_gauges(
    model: str | None,
    window: int | None,
    textfile: Path | None,
    answer_asked: Callable[[str | None, int | None], AllowedAnswer],
    decide: Callable[[LocalModels], AllowedAnswer],
) -> tuple[AllowedAnswer, str, str | None]:
    """`slots allowed --format openmetrics` or `--textfile`: the answer, its gauges, and the
    warning when `textfile` could not take them (None when it did, or none was given)."""
    answer, labels = answer_with_labels(model, window, answer_asked, decide)
    metrics = openmetrics_text(answer, labels)
    warning = textfile_warning(textfile, metrics) if textfile is not None else None
    return answer, metrics, warning


__all__ = [
    "GAUGES",
    "MetricLabels",
    "answer_with_gauges",
    "answer_with_labels",
    "check_textfile",
    "openmetrics_text",
    "textfile_warning",
    "write_textfile",
]

"""The figures of each evidence file, kept beside it: `cache/figures/<fingerprint>.json`.

`slots allowed` judges on every call and an evidence file holds every answer of every turn;
parsing one of a megabyte costs tens of milliseconds. So the figures (`judging.figures`) are
stored keyed by the evidence file's identity, the figures' version and the tool's version, and
rebuilt from the evidence whenever any differs or the file is damaged. They are never the
record: the evidence is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ... import __version__
from ...errors import EvidenceError
from ...files import atomic_write_json, read_json
from ..judging import figures as figures_module

if TYPE_CHECKING:
    from ...state import StateLayout
    from ..judging.figures import SweepFigures

FIGURES_SCHEMA = 1
FIGURES_KIND = "vibey-gh-figures"


def figures_path(layout: StateLayout, fingerprint: str) -> Path:
    return layout.cache / "figures" / f"{fingerprint}.json"


def evidence_identity(evidence: Path) -> dict[str, int]:
    """What stored figures are keyed by; take it before reading the evidence they come from."""
    # Every rewrite is an atomic rename, so a new inode: a same-size rewrite within the same
    # nanosecond still differs.
    stat = os.stat(evidence)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}


def read_figures(
    layout: StateLayout, fingerprint: str, evidence: Path
) -> tuple[float, SweepFigures] | None:
    """(created_at, figures) stored for this very evidence file, or None: rebuild them."""
    try:
        data = read_json(figures_path(layout, fingerprint), kind="figures")
        if (
            data.get("schema_version") != FIGURES_SCHEMA
            or data.get("kind") != FIGURES_KIND
            or data.get("figures_version") != figures_module.FIGURES_VERSION
            or data.get("tool_version") != __version__
            or data.get("evidence") != evidence_identity(evidence)
        ):
            return None
        return float(data["created_at"]), figures_module.SweepFigures.from_json(data["figures"])
    except (EvidenceError, OSError, KeyError, TypeError, ValueError, AttributeError):
        return None


def save_figures(
    layout: StateLayout,
    fingerprint: str,
    identity: dict[str, int],
    created_at: float,
    figures: SweepFigures,
) -> None:
    """Keep the figures of the evidence whose identity was taken before it was read.

    A failure to write only costs the next call a rebuild, so it is not an error.
    """
    try:
        atomic_write_json(
            figures_path(layout, fingerprint),
            {
                "schema_version": FIGURES_SCHEMA,
                "kind": FIGURES_KIND,
                "figures_version": figures_module.FIGURES_VERSION,
                "tool_version": __version__,
                "evidence": identity,
                "created_at": created_at,
                "figures": figures.to_json(),
            },
        )
    except OSError:
        return

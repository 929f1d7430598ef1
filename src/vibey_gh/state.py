"""Where the tool keeps its state: evidence, progress, requests, runs, lanes and storms."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from .files import ensure_private_dir
from .userdirs import user_state_dir

STATE_DIR_ENV = "VIBEY_GH_SLOTS_DIR"


def state_root(environ: Mapping[str, str] | None = None) -> Path:
    """`$VIBEY_GH_SLOTS_DIR`, else the platform state dir (~/.local/state/vibey-gh/slots)."""
    env = os.environ if environ is None else environ
    explicit = env.get(STATE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return user_state_dir(env) / "slots"


class StateLayout(msgspec.Struct, frozen=True):
    """The folders under the state root (design §7). Created 0700 on first use."""

    root: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StateLayout:
        return cls(state_root(environ))

    def _dir(self, name: str) -> Path:
        return ensure_private_dir(self.root / name)

    @property
    def evidence(self) -> Path:
        return self._dir("evidence")

    @property
    def progress(self) -> Path:
        return self._dir("progress")

    @property
    def requests(self) -> Path:
        return self._dir("requests")

    @property
    def runs(self) -> Path:
        return self._dir("runs")

    @property
    def lanes(self) -> Path:
        return self._dir("lanes")

    @property
    def locks(self) -> Path:
        return self._dir("locks")

    @property
    def cache(self) -> Path:
        return self._dir("cache")

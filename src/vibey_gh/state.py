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


class _Folder:
    """A folder of the state layout, named as the attribute it is, created 0700 when asked for."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, layout: StateLayout, owner: type | None = None) -> Path:
        return ensure_private_dir(layout.root / self.name)


class StateLayout(msgspec.Struct, frozen=True):
    """The folders under the state root (design §7). Created 0700 on first use."""

    root: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StateLayout:
        return cls(state_root(environ))

    # the folders, each created 0700 when first asked for
    evidence = _Folder()
    progress = _Folder()
    requests = _Folder()
    runs = _Folder()
    lanes = _Folder()
    locks = _Folder()
    cache = _Folder()

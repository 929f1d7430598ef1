"""The sweep re-reads the bounds at each decision; a config edited into invalid TOML mid-run
keeps the last good bounds, said once, and no worker thread dies of it."""

from __future__ import annotations

import threading
from pathlib import Path

from vibey_gh.config import load_config
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.measurement.calibrate import last_good_bounds

GOOD = "[local_models.bounds]\nmin_gain = 0.25\n"


def test_invalid_toml_mid_run_keeps_the_last_good_bounds_and_says_so_once(tmp_path: Path) -> None:
    config = tmp_path / "vibey-gh.toml"
    config.write_text(GOOD)
    said: list[str] = []
    bounds_now = last_good_bounds(
        lambda: load_config(cwd=tmp_path, environ={}), Bounds(), said.append
    )
    assert bounds_now().min_gain == 0.25
    config.write_text("[local_models.bounds\nmin_gain = ")
    assert bounds_now().min_gain == 0.25
    assert bounds_now().min_gain == 0.25
    assert len(said) == 1
    assert said[0].startswith("the config cannot be read (")
    assert "not valid TOML" in said[0] and said[0].endswith("; keeping the last good bounds")
    config.write_text("[local_models.bounds]\nmin_gain = 0.5\n")
    assert bounds_now().min_gain == 0.5  # a fixed config is read again at once


def test_workers_asking_while_the_config_is_broken_all_get_bounds(tmp_path: Path) -> None:
    config = tmp_path / "vibey-gh.toml"
    config.write_text("x = " + "[" * 600 + "]" * 600 + "\n")
    said: list[str] = []
    bounds_now = last_good_bounds(
        lambda: load_config(cwd=tmp_path, environ={}), Bounds(min_gain=0.3), said.append
    )
    answers: list[float] = []
    workers = [
        threading.Thread(target=lambda: answers.extend(bounds_now().min_gain for _ in range(20)))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert answers == [0.3] * 80
    assert len(said) == 1 and "nested more than 64 levels deep" in said[0]

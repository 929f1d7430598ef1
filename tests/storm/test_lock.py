"""The model lock: shared for lanes, exclusive for a calibration, and it names its holder."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.errors import MalformedJson, Refused
from vibey_gh.interfaces.schema import checked
from vibey_gh.state import StateLayout
from vibey_gh.storm.lock import Holder, model_lock, model_lock_holders, model_lock_path


def take(layout: StateLayout, **kwargs: Any) -> None:
    with model_lock(layout, **kwargs):
        pass


def test_lanes_share_it_and_a_calibration_is_refused_naming_them(layout: StateLayout) -> None:
    with model_lock(layout, exclusive=False), model_lock(layout, exclusive=False):
        assert [h.role for h in model_lock_holders(layout)] == ["lane", "lane"]
        with pytest.raises(Refused) as refused, model_lock(layout, exclusive=True):
            pass
    message = str(refused.value)
    assert message.startswith("the model lock is held by 2 holders: ")
    assert f"lane pid {os.getpid()} since " in message and "(shared)" in message
    assert message.endswith(": wait for it to finish, or stop it (kill PID)")


def test_a_calibration_holds_it_alone(layout: StateLayout) -> None:
    with model_lock(layout, exclusive=True, role="calibration") as holder:
        assert holder.mode == "exclusive"
        for exclusive in (False, True):
            with pytest.raises(Refused, match=f"calibration pid {os.getpid()} since .* UTC"):
                take(layout, exclusive=exclusive)
    with model_lock(layout, exclusive=False):
        pass  # free again


def test_the_side_file_is_private_and_goes_away(layout: StateLayout) -> None:
    with model_lock(layout):
        sides = list(model_lock_path(layout).parent.glob("model-*.holders/*.json"))
        assert len(sides) == 1 and stat.S_IMODE(sides[0].stat().st_mode) == 0o600
    assert model_lock_holders(layout) == []
    assert not list(model_lock_path(layout).parent.glob("model-*.holders/*.json"))


def test_a_waiter_says_who_it_waits_for_and_gets_it_once_free(layout: StateLayout) -> None:
    told: list[str] = []
    release = threading.Event()
    taken = threading.Event()

    def calibration() -> None:
        with model_lock(layout, exclusive=True):
            taken.set()
            release.wait(60)

    holder = threading.Thread(target=calibration)
    holder.start()
    taken.wait(60)

    def on_wait(text: str) -> None:
        told.append(text)
        release.set()

    with model_lock(layout, exclusive=False, wait=True, on_wait=on_wait) as lane:
        assert lane.role == "lane"
    holder.join()
    assert len(told) == 1 and told[0].startswith("waiting: the model lock is held by calibration")


def test_a_waiter_gives_up_on_timeout_or_stop(layout: StateLayout) -> None:
    stop = threading.Event()
    stop.set()
    with model_lock(layout, exclusive=True):
        with pytest.raises(Refused, match="gave up after 0.3s"):
            take(layout, exclusive=False, wait=True, timeout_s=0.3)
        with pytest.raises(Refused, match="stopped while waiting"):
            take(layout, exclusive=False, wait=True, stop=stop)


HOLD = """
import sys, time
from pathlib import Path
from vibey_gh.state import StateLayout
from vibey_gh.storm.lock import model_lock
with model_lock(StateLayout(Path(sys.argv[1])), exclusive=True, role="calibration"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_another_process_is_named_and_a_kill_9_frees_the_lock(layout: StateLayout) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(layout.root)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(Refused, match=f"held by calibration pid {child.pid} since"):
            take(layout, exclusive=False)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    # the kernel released the flock with the process; its side file is ignored and cleaned
    with model_lock(layout, exclusive=True) as holder:
        assert holder.pid == os.getpid()
        assert [h.pid for h in model_lock_holders(layout)] == [os.getpid()]


def test_each_node_has_its_own_lock_in_a_shared_state_dir(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    node_a = model_lock_path(layout, {"VIBEY_GH_NODE": "node-a"})
    node_b = model_lock_path(layout, {"VIBEY_GH_NODE": "node/b"})
    assert node_a.name == "model-node-a.lock"
    assert node_b.name == "model-node_b.lock"
    assert model_lock_path(layout, {}).name.startswith("model-")


def outside_folder(tmp_path: Path) -> Path:
    """A folder outside the state dir, opened up as /etc or a home folder would be."""
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o755)
    (outside / "precious").write_text("keep me\n")
    return outside


def untouched(outside: Path) -> bool:
    return (
        sorted(p.name for p in outside.iterdir()) == ["precious"]
        and (outside / "precious").read_text() == "keep me\n"
        and stat.S_IMODE(outside.stat().st_mode) == 0o755
    )


def test_a_lock_file_that_is_a_link_is_never_followed(layout: StateLayout, tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    lock = model_lock_path(layout)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.symlink_to(outside / "precious")
    with pytest.raises(Refused, match="is a link or not a regular file; locks are never taken"):
        take(layout)
    (lock.parent / "dangling.lock").symlink_to(outside / "made-through-a-link")
    from vibey_gh.storm.lock import file_lock

    with (
        pytest.raises(Refused, match="is a link"),
        file_lock(lock.parent / "dangling.lock", exclusive=True, wait=False, role="test"),
    ):
        pass
    assert untouched(outside)


def test_a_locks_folder_that_is_a_link_is_never_followed(
    layout: StateLayout, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    locks = model_lock_path(layout).parent
    if locks.is_dir():
        locks.rmdir()  # made empty with the layout
    locks.parent.mkdir(parents=True, exist_ok=True)
    locks.symlink_to(outside)
    with pytest.raises(Refused, match=r"the lock folder .* is a link or not a regular folder"):
        take(layout)
    assert untouched(outside)  # nothing made there, and its mode not tightened to 0700


def test_a_holders_folder_that_is_a_link_is_never_written_through(
    layout: StateLayout, tmp_path: Path
) -> None:
    outside = outside_folder(tmp_path)
    lock = model_lock_path(layout)
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.with_name(lock.stem + ".holders").symlink_to(outside)
    with pytest.raises(Refused, match="holders folder .* is a link"):
        take(layout)
    assert untouched(outside)
    assert model_lock_holders(layout) == []


def test_a_fifo_in_place_of_the_lock_is_refused_without_blocking(layout: StateLayout) -> None:
    lock = model_lock_path(layout)
    lock.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(lock)
    with pytest.raises(Refused, match="not a regular file"):
        take(layout)


def test_a_side_file_of_another_shape_names_no_holder(layout: StateLayout) -> None:
    with model_lock(layout, exclusive=False, wait=False, role="lane"):
        (side,) = model_lock_path(layout).parent.glob("model-*.holders/*.json")
        written = json.loads(side.read_text())
        assert checked(written, Holder).role == "lane"
        folder = side.parent
        for name, foreign in {
            "a.json": {**written, "pid": str(os.getpid())},
            "b.json": {**written, "since": "today"},
            "c.json": {**written, "role": None},
        }.items():
            (folder / name).write_text(json.dumps(foreign))
        # the foreign files say nothing about who holds it; the real holder is still named
        assert [h.role for h in model_lock_holders(layout)] == ["lane"]
    with pytest.raises(MalformedJson, match=r"^pid: expected a whole number, got '1'"):
        checked({**written, "pid": "1"}, Holder)

"""The queue folder: atomic moves, claims, and recovery after a crash from the lane records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.lanes.records import LaneRecorder
from vibey_gh.storm.queue import CLAIM_SUFFIX, StormQueue


@pytest.fixture
def queue(tmp_path: Path) -> StormQueue:
    pending = tmp_path / "q" / "pending"
    pending.mkdir(parents=True)
    for name in ("a.toml", "b.toml", "c.toml", "d.toml", "e.toml"):
        (pending / name).write_text(f"# {name}\n", encoding="utf-8")
    (pending / "notes.txt").write_text("not a spec", encoding="utf-8")
    (pending / ".hidden.toml").write_text("", encoding="utf-8")
    return StormQueue(tmp_path / "q")


def where(queue: StormQueue) -> dict[str, list[str]]:
    return {state: queue.specs(state) for state in ("pending", "running", "done", "failed")}


def record(root: Path, run_id: str, status: str | None) -> None:
    recorder = LaneRecorder(root, run_id)
    recorder.write("start")
    recorder.write("turn", index=0, attempt=1, payload={"messages": [], "tools": []})
    if status is not None:
        recorder.end(status=status)


def test_only_visible_toml_files_are_specs(queue: StormQueue) -> None:
    assert queue.pending() == ["a.toml", "b.toml", "c.toml", "d.toml", "e.toml"]
    assert queue.counts() == {"pending": 5, "running": 0, "done": 0, "failed": 0}
    # what the storm's log says: words, not a Python dict
    assert queue.counts_text() == "5 pending, 0 running, 0 done, 0 failed"


def test_a_claim_moves_the_spec_and_names_its_run(queue: StormQueue) -> None:
    claim = queue.claim("a.toml", "a-run")
    assert claim is not None and claim.spec_path == queue.folder("running") / "a.toml"
    assert claim.spec_path.read_text(encoding="utf-8") == "# a.toml\n"
    assert queue.read_claim("a.toml") == "a-run"
    assert queue.claim("a.toml", "again") is None  # gone from pending
    assert queue.claim("zzz.toml", "none") is None
    assert where(queue)["running"] == ["a.toml"]


def test_settling_moves_the_claim_along_or_drops_it(queue: StormQueue) -> None:
    for name in ("a.toml", "b.toml"):
        queue.claim(name, name + "-run")
    assert queue.settle("a.toml", "done") == "a.toml"
    assert queue.settle("b.toml", "pending") == "b.toml"
    assert (
        json.loads((queue.folder("done") / ("a.toml" + CLAIM_SUFFIX)).read_text())["run_id"]
        == "a.toml-run"
    )
    assert not list(queue.folder("running").iterdir())
    assert not (queue.folder("pending") / ("b.toml" + CLAIM_SUFFIX)).exists()
    assert "b.toml" in queue.pending()


def test_nothing_is_overwritten_when_a_name_comes_back(queue: StormQueue) -> None:
    queue.claim("a.toml", "first")
    queue.settle("a.toml", "done")
    (queue.folder("pending") / "a.toml").write_text("# second a\n", encoding="utf-8")
    queue.claim("a.toml", "second")
    assert queue.settle("a.toml", "done") == "a-2.toml"
    assert (queue.folder("done") / "a.toml").read_text() == "# a.toml\n"
    assert (queue.folder("done") / "a-2.toml").read_text() == "# second a\n"


def test_recovery_puts_each_spec_where_its_record_says(queue: StormQueue, tmp_path: Path) -> None:
    records = tmp_path / "records"
    claims = {
        "a.toml": ("a-run", "answered"),
        "b.toml": ("b-run", "failed"),
        "c.toml": ("c-run", None),
        "d.toml": ("d-run", "interrupted"),
    }
    for name, (run_id, status) in claims.items():
        queue.claim(name, run_id)
        record(records, run_id, status)
    queue.claim("e.toml", "e-run")  # claimed, but the lane never wrote a line
    (queue.folder("running") / "loose.toml").write_text("", encoding="utf-8")  # no claim file
    lines = queue.recover(records)
    assert where(queue) == {
        "pending": ["c.toml", "d.toml", "e.toml", "loose.toml"],
        "running": [],
        "done": ["a.toml"],
        "failed": ["b.toml"],
    }
    assert not list(queue.folder("running").iterdir())
    assert "recovered a.toml: lane a-run ended answered → done/a.toml" in lines
    assert "recovered c.toml: lane c-run did not finish → pending/c.toml" in lines
    assert "recovered loose.toml: claimed but never started → pending/loose.toml" in lines


def test_recovery_reunites_a_claim_left_behind(queue: StormQueue, tmp_path: Path) -> None:
    queue.claim("a.toml", "a-run")
    # a crash between moving the spec and moving its claim
    (queue.folder("running") / "a.toml").rename(queue.folder("done") / "a.toml")
    queue.recover(tmp_path / "records")
    assert (queue.folder("done") / ("a.toml" + CLAIM_SUFFIX)).exists()
    assert not list(queue.folder("running").iterdir())


def test_a_missing_queue_folder_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such queue folder"):
        StormQueue(tmp_path / "nope")


@pytest.mark.parametrize("root", ["/proc", "/proc/self/cwd", "/sys", "/dev/shm"])
def test_a_queue_in_a_kernel_file_system_is_refused(root: str) -> None:
    with pytest.raises(BadInput, match=r"^queue folder .* is in /(proc|sys|dev), the kernel's"):
        StormQueue(Path(root))

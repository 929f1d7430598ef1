"""`vibey-gh slots forget --checkpoints`: the checkpoints doctor lists, removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vibey_gh.state import StateLayout


def test_forget_removes_the_checkpoints_doctor_lists(
    tmp_path: Path, layout: StateLayout, run_cli: Any
) -> None:
    # a checkpoint as a sweep paused after one step leaves it, beside recorded evidence
    fingerprint = "f" * 16
    checkpoint = _checkpoint(layout.progress / f"{fingerprint}-cccccccccccc-mmm.json", fingerprint)
    (layout.evidence / f"{fingerprint}.json").write_text("{}")
    other = run_cli(["slots", "forget", "--checkpoints", "--fingerprint", "0" * 16])
    assert other.exit_code == 0 and other.output == "no checkpoint to remove\n"
    assert checkpoint.exists()
    result = run_cli(["slots", "forget", "--checkpoints", "--json"])
    assert result.exit_code == 0, result.output
    (removed,) = json.loads(result.output)["removed"]
    assert removed["path"] == str(checkpoint) and removed["steps"] == 1
    assert removed["fingerprint"] == fingerprint
    assert not checkpoint.exists()
    assert list(layout.evidence.glob("*.json")), "evidence is never forgotten"


def test_forget_without_what_is_bad_input(run_cli: Any) -> None:
    result = run_cli(["slots", "forget"])
    assert result.exit_code == 2
    assert result.stderr == "error: say what to forget: --checkpoints\n"


def _checkpoint(path: Path, fingerprint: str = "a" * 16) -> Path:
    from tests.support.evidence import RECORDED
    from vibey_gh.slots.evidence.checkpoints import save_progress
    from vibey_gh.slots.evidence.store import load_evidence

    steps = load_evidence(RECORDED).steps[:1]
    key = {"fingerprint": fingerprint, "corpus": "c" * 64, "method": "m" * 12}
    save_progress(path, key, steps)
    return path


def test_forget_refuses_a_progress_folder_that_links_elsewhere(
    tmp_path: Path, layout: StateLayout, run_cli: Any
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = [_checkpoint(elsewhere / "a.json"), elsewhere / "b.json"]
    precious[1].write_text('{"mine": true}')
    layout.root.mkdir(parents=True, exist_ok=True)
    (layout.root / "progress").symlink_to(elsewhere)
    result = run_cli(["slots", "forget", "--checkpoints"])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {layout.root / 'progress'} is a link (to ")
    assert "nothing removed" in result.stderr and result.stderr.count("\n") == 1
    assert all(path.exists() for path in precious)


def test_forget_removes_only_what_reads_back_as_a_checkpoint(
    tmp_path: Path, layout: StateLayout, run_cli: Any
) -> None:
    import os

    folder = layout.progress
    ours = _checkpoint(folder / "ours.json")
    outside = _checkpoint(tmp_path / "outside.json")
    (folder / "linked.json").symlink_to(outside)
    (folder / "bad.json").write_text("{not json")
    (folder / "other-schema.json").write_text('{"schema_version": 7, "kind": "vibey-gh-progress"}')
    (folder / "other-kind.json").write_text(
        json.dumps({**json.loads(ours.read_text()), "kind": "someone-elses"})
    )
    os.mkfifo(folder / "fifo.json")
    (folder / "notes.txt").write_text("not ours to judge")

    result = run_cli(["slots", "forget", "--checkpoints"])

    assert result.exit_code == 0, result.output
    assert not ours.exists()
    left = sorted(p.name for p in folder.iterdir())
    assert left == [
        "bad.json", "fifo.json", "linked.json", "notes.txt", "other-kind.json", "other-schema.json"
    ]  # fmt: skip
    assert outside.exists()
    lines = result.output.splitlines()
    assert lines[0] == f"removed {ours} (1 step(s))"
    named = {line.split(":")[0].removeprefix("left ") for line in lines[1:]}
    assert named == {str(folder / name) for name in left if name.endswith(".json")}
    assert f"left {folder / 'linked.json'}: a link, not a checkpoint file" in lines
    assert f"left {folder / 'fifo.json'}: a FIFO, not a checkpoint file" in lines
    report = json.loads(run_cli(["slots", "forget", "--checkpoints", "--json"]).output)
    assert report["removed"] == [] and len(report["left"]) == 5

"""Removals stay inside the folder that was checked, even if it is swapped for a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vibey_gh.platforms.storage.removal import NotOwnFolder, remove_from_folder


def test_only_regular_files_of_the_checked_folder_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "progress"
    folder.mkdir()
    (folder / "a.json").write_text("{}")
    (folder / "sub").mkdir()
    (tmp_path / "outside.json").write_text("{}")
    (folder / "link.json").symlink_to(tmp_path / "outside.json")
    checked = os.lstat(folder)
    outcome = remove_from_folder(folder, ["a.json", "sub", "link.json", "../outside.json"], checked)
    assert outcome == {
        "a.json": None,
        "sub": "no longer a regular file",
        "link.json": "no longer a regular file",
        "../outside.json": "not a plain file name",
    }
    assert (tmp_path / "outside.json").exists() and (folder / "link.json").is_symlink()


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "progress", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "a.json").write_text("{}")
    checked = os.lstat(folder)
    folder.rmdir()
    folder.symlink_to(elsewhere)
    with pytest.raises(NotOwnFolder):
        remove_from_folder(folder, ["a.json"], checked)
    assert (elsewhere / "a.json").exists()


def test_another_folder_in_its_place_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "progress"
    folder.mkdir()
    checked = os.lstat(folder)
    folder.rename(tmp_path / "old")
    folder.mkdir()
    (folder / "a.json").write_text("{}")
    with pytest.raises(NotOwnFolder, match="was replaced"):
        remove_from_folder(folder, ["a.json"], checked)
    assert (folder / "a.json").exists()

"""Reading files anyone could have put there: special files, size, nesting, non-finite numbers."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from vibey_gh.errors import EvidenceError
from vibey_gh.files import ensure_private_dir, read_json
from vibey_gh.guarded import (
    InputProblem,
    NotJson,
    gather_capped,
    json_depth,
    loads_json,
    loads_json_bytes,
    loads_toml,
    nesting_depth,
    read_regular_bytes,
)


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"a": [1, 2.5]}')
    assert read_json(tmp_path / "a.json", kind="evidence") == {"a": [1, 2.5]}


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(EvidenceError, match=r"evidence file .*pipe is a FIFO, not a regular file"):
        read_json(tmp_path / "pipe", kind="evidence")


def test_dev_zero_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(InputProblem, match="is a character device, not a regular file"):
        read_regular_bytes(tmp_path / "zero")


def test_a_socket_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(InputProblem, match="is a socket, not a regular file"):
            read_regular_bytes(tmp_path / "s")


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b" " * (3 << 20))
    with pytest.raises(InputProblem, match="is larger than 2 MiB, the most read"):
        read_regular_bytes(tmp_path / "big", limit=2 << 20)


def test_a_missing_file_stays_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "none")


def test_depth_ignores_brackets_inside_strings() -> None:
    assert json_depth('[{"a": "[[[\\"{"}]') == 2
    assert nesting_depth([{"a": [[]]}]) == 4


@pytest.mark.parametrize("depth", [65, 600, 100_000])
def test_json_nested_too_deep_is_one_clear_error(depth: int) -> None:
    with pytest.raises(InputProblem, match="is nested more than 64 levels deep"):
        loads_json("[" * depth + "]" * depth)


def test_json_at_the_limit_is_read() -> None:
    assert nesting_depth(loads_json("[" * 64 + "]" * 64)) == 64


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("NaN", "non-finite number NaN"),
        ('{"x": Infinity}', "non-finite number Infinity"),
        ("[-Infinity]", "non-finite number -Infinity"),
        ("[1e400]", "the number 1e400, too large to be finite"),
    ],
)
def test_non_finite_numbers_are_refused(text: str, problem: str) -> None:
    with pytest.raises(InputProblem, match=problem):
        loads_json(text)


def test_an_integer_too_long_to_convert_is_refused() -> None:
    with pytest.raises(InputProblem, match="is not usable JSON"):
        loads_json("9" * 5000)


@pytest.mark.parametrize("depth", [65, 600])
def test_toml_nested_too_deep_is_one_clear_error(depth: int) -> None:
    with pytest.raises(InputProblem, match="is nested more than 64 levels deep"):
        loads_toml("a = " + "[" * depth + "]" * depth)


def test_every_folder_created_is_private_whatever_the_umask(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    old = os.umask(0)
    try:
        ensure_private_dir(tmp_path / "out" / "runs" / "stamp-fp")
    finally:
        os.umask(old)
    for folder in (
        tmp_path / "out",
        tmp_path / "out" / "runs",
        tmp_path / "out" / "runs" / "stamp-fp",
    ):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert tmp_path.stat().st_mode & 0o777 == 0o755  # a folder that was there is not ours


def test_a_file_in_the_way_of_a_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    with pytest.raises(NotADirectoryError):
        ensure_private_dir(tmp_path / "out" / "runs")


def test_the_depth_scan_reads_an_unclosed_string_of_escaped_quotes_once() -> None:
    # tried again from every quote inside it, this took seconds per 20,000 quotes
    text = '"' + '\\"' * 100_000
    assert json_depth(text) == 0
    assert json_depth("[" + text) == 1
    with pytest.raises(NotJson, match="is not valid JSON"):
        loads_json(text)


def test_the_depth_scan_counts_past_a_string_ending_in_a_backslash() -> None:
    assert json_depth('[["a\\\\"], {"b": "\\\\"}]') == 2


def test_reply_bytes_are_json_or_not_json() -> None:
    assert loads_json_bytes(b'{"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(NotJson, match="is not UTF-8 text"):
        loads_json_bytes(b"\xff\xfe{}")
    with pytest.raises(NotJson, match="is not valid JSON"):
        loads_json_bytes(b"<html>busy</html>")
    with pytest.raises(InputProblem, match="nested more than 64 levels deep") as refused:
        loads_json_bytes(b"[" * 200_000 + b"]" * 200_000)
    assert not isinstance(refused.value, NotJson)


def test_chunks_past_the_cap_are_refused_as_soon_as_they_pass_it() -> None:
    taken: list[int] = []

    def chunks() -> Iterator[bytes]:
        for index in range(1000):
            taken.append(index)
            yield b"x" * 1024

    with pytest.raises(InputProblem, match="is larger than 4096 bytes, the most read"):
        gather_capped(chunks(), 4096)
    assert len(taken) == 5
    assert gather_capped(iter([b"ab", b"c"]), 3) == b"abc"

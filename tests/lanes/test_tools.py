"""The lanes' tools: definitions, results and the one truncation rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vibey_gh.lanes.tools import (
    MAX_TREE_DEPTH,
    TOOL_RESULT_CHAR_CAP,
    TreeTooLarge,
    WorkingTree,
    capped_walk,
    list_dir,
    normalize_path,
    read_file,
    run_tool,
    tool_call_message,
    tool_definitions,
    tool_result_message,
    truncate_tool_result,
)


@pytest.fixture
def tree(tmp_path: Path) -> WorkingTree:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("b\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\x00\x01")
    (tmp_path / "long.txt").write_text("x" * (TOOL_RESULT_CHAR_CAP + 250), encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"\x00")
    (tmp_path / "link.py").symlink_to(tmp_path / "pkg" / "a.py")
    return WorkingTree(tmp_path)


def test_short_text_is_not_touched() -> None:
    text = "y" * TOOL_RESULT_CHAR_CAP
    assert truncate_tool_result(text) == text


def test_long_text_keeps_the_cap_and_says_how_much_was_cut() -> None:
    text = "a" * 10 + "b" * 5
    result = truncate_tool_result(text, cap=10)
    assert result == "a" * 10 + "\n[truncated: 5 of 15 characters not shown]"


def test_marker_counts_use_thousands_separators() -> None:
    result = truncate_tool_result("z" * (TOOL_RESULT_CHAR_CAP + 1234))
    assert result.startswith("z" * TOOL_RESULT_CHAR_CAP + "\n[truncated: 1,234 of ")
    assert result.endswith(f"{TOOL_RESULT_CHAR_CAP + 1234:,} characters not shown]")


def test_tool_definitions_are_openai_functions_and_a_fresh_copy() -> None:
    tools = tool_definitions()
    names = [tool["function"]["name"] for tool in tools]
    assert names == ["read_file", "list_dir"]
    assert all(tool["type"] == "function" for tool in tools)
    read = tools[0]["function"]["parameters"]
    assert set(read["properties"]) == {"path", "offset", "limit"}
    assert read["required"] == ["path"]
    tools[0]["function"]["name"] = "changed"
    assert tool_definitions()[0]["function"]["name"] == "read_file"


def test_read_file_whole_and_by_lines(tree: WorkingTree) -> None:
    assert read_file(tree, "pkg/a.py") == "one\ntwo\nthree\nfour\n"
    assert read_file(tree, "./pkg/a.py", offset=2, limit=2) == "two\nthree\n"
    assert read_file(tree, "pkg/a.py", offset=4) == "four\n"
    assert read_file(tree, "pkg/a.py", limit=1) == "one\n"


def test_read_file_errors_are_results(tree: WorkingTree) -> None:
    assert read_file(tree, "pkg/a.py", offset=9) == (
        "error: pkg/a.py has 4 lines; offset 9 is past the end"
    )
    assert read_file(tree, "nope.py") == "error: no such file: nope.py"
    assert read_file(tree, "pkg") == "error: pkg is a folder; use list_dir"
    assert read_file(tree, "blob.bin") == "error: blob.bin is a binary file (6 bytes)"
    assert read_file(tree, "../etc/passwd") == "error: '../etc/passwd' is outside the repository"
    assert read_file(tree, "/etc/passwd") == "error: '/etc/passwd' is outside the repository"
    assert read_file(tree, "link.py") == "error: no such file: link.py"
    assert read_file(tree, "empty.txt") == "(empty)"


def test_read_file_truncates_like_truncate_tool_result(tree: WorkingTree) -> None:
    text = (tree.root / "long.txt").read_text(encoding="utf-8")
    result = read_file(tree, "long.txt")
    assert result == truncate_tool_result(text)
    assert result.endswith("[truncated: 250 of 12,250 characters not shown]")


def test_working_tree_skips_git_caches_and_symlinks(tree: WorkingTree) -> None:
    assert list(tree.list_files()) == [
        "README.md",
        "blob.bin",
        "empty.txt",
        "long.txt",
        "pkg/a.py",
        "pkg/sub/b.py",
    ]


def test_list_dir(tree: WorkingTree) -> None:
    assert list_dir(tree, ".") == "README.md\nblob.bin\nempty.txt\nlong.txt\npkg/"
    assert list_dir(tree, "pkg/") == "a.py\nsub/"
    assert list_dir(tree, "nope") == "error: no such folder: nope"
    assert list_dir(tree, "README.md") == "error: README.md is a file; use read_file"


def test_run_tool_accepts_json_strings_and_objects(tree: WorkingTree) -> None:
    assert run_tool("read_file", '{"path": "README.md"}', tree) == "hello\n"
    assert run_tool("read_file", {"path": "pkg/a.py", "offset": 4}, tree) == "four\n"
    assert run_tool("list_dir", {"path": "pkg/sub"}, tree) == "b.py"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", "{not json", "error: the tool arguments are not valid JSON"),
        ("read_file", "[1]", "error: the tool arguments must be a JSON object"),
        (
            "read_file",
            "[" * 200_000 + "]" * 200_000,
            "error: the tool arguments cannot be used: the JSON is nested more than 64 levels",
        ),
        ("read_file", '{"path": NaN}', "error: the tool arguments cannot be used: the JSON holds"),
        ("read_file", {}, "error: read_file needs a 'path' string"),
        ("read_file", {"path": "a", "offset": "2"}, "error: read_file 'offset' must be"),
        ("read_file", {"path": "a", "limit": True}, "error: read_file 'limit' must be"),
        ("list_dir", {"path": 3}, "error: list_dir needs a 'path' string"),
        ("write_file", {"path": "a"}, "error: no tool named 'write_file'"),
    ],
)
def test_run_tool_reports_bad_calls(
    tree: WorkingTree, name: str, arguments: object, expected: str
) -> None:
    assert run_tool(name, arguments, tree).startswith(expected)  # type: ignore[arg-type]


def test_normalize_path() -> None:
    assert normalize_path("") == "."
    assert normalize_path("./a/../b/c.py") == "b/c.py"
    assert normalize_path("a/../../b") is None
    assert normalize_path("/abs") is None


def test_messages_are_openai_shaped() -> None:
    call = tool_call_message("call_1", "read_file", {"path": "é.py"})
    assert call["role"] == "assistant"
    assert call["content"] == ""
    function = call["tool_calls"][0]["function"]
    assert call["tool_calls"][0]["type"] == "function"
    assert function["name"] == "read_file"
    assert function["arguments"] == '{"path": "é.py"}'
    assert json.loads(function["arguments"]) == {"path": "é.py"}
    reply = tool_result_message("call_1", "read_file", "text")
    assert reply == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "read_file",
        "content": "text",
    }


def test_a_linked_folder_cannot_lead_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "door").symlink_to(outside, target_is_directory=True)
    tree = WorkingTree(root)
    assert read_file(tree, "door/secret.txt") == "error: no such file: door/secret.txt"
    assert list(tree.list_files()) == []


def test_working_tree_refuses_links_out_and_special_files(tmp_path: Path) -> None:
    import os

    from vibey_gh.lanes.tools import WorkingTree

    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "pipe")
    tree = WorkingTree(root)
    with pytest.raises(FileNotFoundError):
        tree.read_bytes("linkdir/secret.txt")
    with pytest.raises(FileNotFoundError):
        tree.read_bytes("pipe")


def wide_tree(root: Path, folders: int, files: int) -> Path:
    for f in range(folders):
        (root / f"d{f:02}").mkdir(parents=True)
        for n in range(files):
            (root / f"d{f:02}" / f"f{n}.txt").write_text("x", encoding="utf-8")
    return root


def deep_tree(root: Path, depth: int) -> Path:
    folder = root.joinpath(*(f"l{level}" for level in range(depth)))
    folder.mkdir(parents=True)
    (folder / "bottom.txt").write_text("x", encoding="utf-8")
    (root / "top.txt").write_text("x", encoding="utf-8")
    return root


def test_a_tree_past_the_entry_cap_is_refused_naming_the_cap(tmp_path: Path) -> None:
    root = wide_tree(tmp_path / "wide", folders=12, files=9)  # 12 + 108 entries
    assert len(WorkingTree(root, max_entries=120).list_files()) == 108
    with pytest.raises(TreeTooLarge, match=r"more than 119 files and folders .*smaller folder"):
        WorkingTree(root, max_entries=119).list_files()


def test_a_tree_past_the_depth_cap_is_refused_naming_the_deep_folder(tmp_path: Path) -> None:
    root = deep_tree(tmp_path / "deep", depth=8)
    assert WorkingTree(root, max_depth=8).list_files() == [
        "l0/l1/l2/l3/l4/l5/l6/l7/bottom.txt",
        "top.txt",
    ]
    with pytest.raises(TreeTooLarge, match=r"more than 7 levels deep \(l0/l1/l2/l3/l4/l5/l6/l7\)"):
        WorkingTree(root, max_depth=7).list_files()


def test_the_default_depth_cap_holds_on_a_generated_tree(tmp_path: Path) -> None:
    root = deep_tree(tmp_path / "deep", depth=MAX_TREE_DEPTH + 6)
    with pytest.raises(TreeTooLarge, match=f"more than {MAX_TREE_DEPTH} levels deep"):
        WorkingTree(root).list_files()


def test_list_dir_on_a_tree_too_large_is_an_error_the_model_reads(tmp_path: Path) -> None:
    root = wide_tree(tmp_path / "wide", folders=3, files=3)
    answer = list_dir(WorkingTree(root, max_entries=5), ".")
    assert answer.startswith("error: the repository cannot be listed: ")
    assert "more than 5 files and folders" in answer


def test_capped_walk_counts_files_and_folders_and_names_the_advice(tmp_path: Path) -> None:
    root = wide_tree(tmp_path / "wide", folders=4, files=3)  # 4 + 12 entries
    walked = [
        (relative.as_posix(), sorted(names))
        for _, relative, names in capped_walk(root, max_entries=16, advice="x")
    ]
    assert sorted(walked)[0] == (".", [])
    assert len(walked) == 5
    with pytest.raises(TreeTooLarge, match=r"more than 15 files and folders .* as --specs$"):
        list(capped_walk(root, max_entries=15, advice="--specs"))


def test_capped_walk_does_not_follow_a_link_to_a_folder(tmp_path: Path) -> None:
    root = deep_tree(tmp_path / "deep", depth=3)
    (root / "loop").symlink_to(root, target_is_directory=True)
    folders = sorted(relative.as_posix() for _, relative, _ in capped_walk(root, advice="x"))
    assert folders == [".", "l0", "l0/l1", "l0/l1/l2"]

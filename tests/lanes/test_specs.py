"""Lane spec parsing, discovery and file resolution."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vibey_gh.errors import BadInput
from vibey_gh.lanes.specs import (
    LaneSpec,
    find_spec_files,
    glob_regex,
    load_spec,
    load_specs,
    parse_spec,
    resolve_files,
)
from vibey_gh.lanes.tools import MAX_TREE_DEPTH, TreeTooLarge

VALID = """
id = "state-files"
title = "Where files go"
task = "Explain the state folder."
repository = "repo"
files = ["a.py", "pkg/*.py"]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def spec_with(**changes: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "id": "s1",
        "title": "t",
        "task": "do it",
        "repository": "repo",
        "files": ["a.py"],
    }
    raw.update(changes)
    return raw


def test_load_spec_resolves_repository_against_the_spec_folder(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path / "specs" / "one.toml", VALID))
    assert spec.id == "state-files"
    assert spec.repository == tmp_path / "specs" / "repo"
    assert spec.files == ("a.py", "pkg/*.py")
    assert spec.commit is None
    assert spec.source == tmp_path / "specs" / "one.toml"


def test_absolute_repository_and_commit_are_kept(tmp_path: Path) -> None:
    spec = parse_spec(spec_with(repository=str(tmp_path), commit="v1.0"), base=Path("/elsewhere"))
    assert spec.repository == tmp_path
    assert spec.commit == "v1.0"


def test_unknown_key_is_refused_and_named(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="unknown key 'colour'"):
        load_spec(write(tmp_path / "x.toml", VALID + 'colour = "red"\n'))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "has space"}, "may hold only"),
        ({"title": ""}, "'title' must be a non-empty string"),
        ({"task": 3}, "'task' must be a non-empty string"),
        ({"files": []}, "non-empty list"),
        ({"files": "a.py"}, "non-empty list"),
        ({"files": ["/etc/passwd"]}, "relative path inside"),
        ({"files": ["../outside.py"]}, "relative path inside"),
        ({"files": [""]}, "non-empty string"),
        ({"commit": "--upload-pack=x"}, "not a git revision"),
        (
            {"files": ["[z-a].txt"]},
            r"file glob '\[z-a\].txt' is not a valid glob: the class \[z-a\] is not a set of "
            r"characters \(bad character range z-a\)$",
        ),
        # not the regex's own "bad escape \Z", which names nothing the user wrote
        (
            {"files": ["[!]"]},
            r"file glob '\[!\]' is not a valid glob: the class \[!\] names no "
            "character$",
        ),
    ],
)
def test_bad_values_are_one_clear_error(changes: dict[str, object], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        parse_spec(spec_with(**changes), base=Path("/tmp"))


def test_missing_key_is_named() -> None:
    raw = spec_with()
    del raw["files"]
    with pytest.raises(BadInput, match="missing key 'files'"):
        parse_spec(raw, base=Path("/tmp"))


def test_a_spec_nested_too_deep_is_one_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.toml", VALID + "x = " + "[" * 600 + "]" * 600 + "\n")
    with pytest.raises(BadInput, match="deep.toml is nested more than 64 levels deep"):
        load_spec(path)


def test_a_fifo_spec_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    with pytest.raises(BadInput, match="pipe.toml is a FIFO, not a regular file"):
        load_spec(tmp_path / "pipe.toml")


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.toml", "id = \n")
    with pytest.raises(BadInput, match="broken.toml: not valid TOML"):
        load_spec(path)


def test_find_spec_files_walks_folders_sorted_and_dedupes(tmp_path: Path) -> None:
    b = write(tmp_path / "specs" / "b.toml", VALID)
    a = write(tmp_path / "specs" / "sub" / "a.toml", VALID)
    write(tmp_path / "specs" / "notes.txt", "not a spec")
    found = find_spec_files([tmp_path / "specs", b])
    assert found == [b.resolve(), a.resolve()]


def test_find_spec_files_refuses_a_folder_too_deep_to_walk(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    write(specs.joinpath(*(f"l{level}" for level in range(MAX_TREE_DEPTH + 2)), "a.toml"), VALID)
    with pytest.raises(TreeTooLarge, match=f"more than {MAX_TREE_DEPTH} levels deep .*--specs"):
        find_spec_files([specs])


def test_find_spec_files_does_not_follow_links_to_folders(tmp_path: Path) -> None:
    a = write(tmp_path / "specs" / "a.toml", VALID)
    write(tmp_path / "elsewhere" / "b.toml", VALID)
    (tmp_path / "specs" / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert find_spec_files([tmp_path / "specs"]) == [a.resolve()]


def test_find_spec_files_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such spec file or folder"):
        find_spec_files([tmp_path / "nope"])


def test_load_specs_sorts_by_id_and_refuses_duplicate_ids(tmp_path: Path) -> None:
    write(tmp_path / "a.toml", VALID.replace("state-files", "zeta"))
    write(tmp_path / "b.toml", VALID.replace("state-files", "alpha"))
    assert [spec.id for spec in load_specs([tmp_path])] == ["alpha", "zeta"]
    write(tmp_path / "c.toml", VALID.replace("state-files", "alpha"))
    with pytest.raises(BadInput, match="'alpha' is used twice"):
        load_specs([tmp_path])


def test_load_specs_refuses_a_folder_without_specs(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no lane specs found"):
        load_specs([tmp_path])


def make_spec(*files: str) -> LaneSpec:
    return LaneSpec("s", "t", "task", Path("/repo"), tuple(files))


AVAILABLE = ["README.md", "a.py", "pkg/b.py", "pkg/a.py", "pkg/sub/c.py", "pkg/x.txt"]


def test_resolve_files_keeps_order_sorts_glob_matches_and_reads_once() -> None:
    spec = make_spec("pkg/b.py", "pkg/*.py", "a.py", "pkg/b.py")
    assert resolve_files(spec, AVAILABLE) == ["pkg/b.py", "pkg/a.py", "a.py"]


def test_star_stays_in_its_folder_and_double_star_goes_deep() -> None:
    assert resolve_files(make_spec("pkg/*.py"), AVAILABLE) == ["pkg/a.py", "pkg/b.py"]
    assert resolve_files(make_spec("**/*.py"), AVAILABLE) == [
        "a.py",
        "pkg/a.py",
        "pkg/b.py",
        "pkg/sub/c.py",
    ]


def test_character_classes_and_question_mark() -> None:
    assert resolve_files(make_spec("pkg/[!a].py"), AVAILABLE) == ["pkg/b.py"]
    assert resolve_files(make_spec("pkg/?.txt"), AVAILABLE) == ["pkg/x.txt"]
    assert glob_regex("[ab].py").match("a.py")
    assert not glob_regex("*.py").match("pkg/a.py")


def test_a_missing_file_or_an_empty_glob_is_an_error() -> None:
    with pytest.raises(BadInput, match="file not found in /repo: nope.py"):
        resolve_files(make_spec("a.py", "nope.py"), AVAILABLE)
    with pytest.raises(BadInput, match="no file in /repo matches 'docs/\\*.md'"):
        resolve_files(make_spec("docs/*.md"), AVAILABLE)


def test_a_file_linked_out_of_the_repository_is_refused_as_such(tmp_path: Path) -> None:
    repository, outside = tmp_path / "repo", tmp_path / "secret.txt"
    repository.mkdir()
    outside.write_text("key\n")
    (repository / "a.py").write_text("A = 1\n")
    (repository / "leak.txt").symlink_to(outside)
    (repository / "alias.py").symlink_to(repository / "a.py")
    spec = LaneSpec("s", "t", "task", repository, ("leak.txt",))
    with pytest.raises(BadInput) as refused:
        resolve_files(spec, ["a.py"])  # the listing holds no link
    assert str(refused.value) == (
        f"{spec.where}: leak.txt in {repository} is a link out of the repository (to "
        f"{outside.resolve()}); a lane reads only files inside it"
    )
    inside = LaneSpec("s", "t", "task", repository, ("alias.py",))
    with pytest.raises(BadInput, match="alias.py in .* is a link; a lane reads no link"):
        resolve_files(inside, ["a.py"])


@pytest.mark.parametrize(
    "repository", ["/", "/etc", "/usr", "/bin", "/usr/lib/../lib", "/var/", "~", "/home"]
)
def test_a_system_folder_as_repository_is_refused(repository: str) -> None:
    with pytest.raises(BadInput) as refused:
        parse_spec(spec_with(repository=repository), base=Path("/elsewhere"))
    message = str(refused.value)
    assert message.startswith("spec: repository ") and "is the system folder" in message
    assert "could read every file in it" in message
    assert message.endswith("name a folder inside it, or set allow_system_folder = true")


def test_a_link_to_the_root_is_refused_as_the_root(tmp_path: Path) -> None:
    (tmp_path / "everything").symlink_to("/")
    with pytest.raises(BadInput, match="is the system folder /,"):
        parse_spec(spec_with(repository=str(tmp_path / "everything")), base=tmp_path)


def test_allow_system_folder_lifts_the_refusal_but_never_for_the_kernel() -> None:
    home = parse_spec(spec_with(repository="~", allow_system_folder=True), base=Path("/x"))
    assert home.repository == Path.home()
    for kernel in ("/proc", "/proc/self/cwd", "/sys/kernel", "/dev"):
        with pytest.raises(BadInput, match=r"is the system folder /(proc|sys|dev), and") as no:
            parse_spec(spec_with(repository=kernel, allow_system_folder=True), base=Path("/x"))
        assert "allow_system_folder" not in str(no.value)
    with pytest.raises(BadInput, match="'allow_system_folder' must be true or false"):
        parse_spec(spec_with(allow_system_folder="yes"), base=Path("/x"))


def test_a_folder_inside_a_system_folder_is_the_users_choice() -> None:
    spec = parse_spec(spec_with(repository="/usr/src/project"), base=Path("/x"))
    assert spec.repository == Path("/usr/src/project")

"""Building the pool: from specs (git and working tree), lane records and transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_corpus_support import SOURCE_FILES, synthetic_run, write_spec

from tests.support.repos import commit_all, git, make_repo, write_files
from vibey_gh.errors import BadInput
from vibey_gh.lanes.plan import opening_messages
from vibey_gh.lanes.specs import load_spec
from vibey_gh.lanes.tools import (
    MAX_TREE_DEPTH,
    TreeTooLarge,
    WorkingTree,
    list_dir,
    read_file,
    tool_definitions,
)
from vibey_gh.slots.corpus.git_source import GitFailed, GitTree
from vibey_gh.slots.corpus.pool import PoolSources, build_pool, make_pool, select_specs
from vibey_gh.slots.corpus.turns import depth_estimate


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, SOURCE_FILES)
    return root


def test_spec_run_is_plan_then_one_read_file_turn_per_file(repo: Path, tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path / "specs", "reader", ["pkg/small.py", "pkg/*.py"], repo)
    pool = build_pool(PoolSources(specs=[spec_path]))
    (run,) = pool.runs
    files = ["pkg/small.py", "pkg/__init__.py", "pkg/medium.py"]
    assert [turn.index for turn in run.turns] == [0, 1, 2, 3]
    assert [turn.id for turn in run.turns] == ["reader#0", "reader#1", "reader#2", "reader#3"]
    assert run.turns[0].messages == opening_messages(load_spec(spec_path))
    assert run.turns[0].tools == tool_definitions()
    for index, turn in enumerate(run.turns[1:], start=1):
        assert len(turn.messages) == 2 + 2 * index
        assert turn.messages[:-2] == run.turns[index - 1].messages
        call, reply = turn.messages[-2:]
        (tool_call,) = call["tool_calls"]
        assert json.loads(tool_call["function"]["arguments"]) == {"path": files[index - 1]}
        assert reply["role"] == "tool"
        assert reply["tool_call_id"] == tool_call["id"]
        assert reply["content"] == SOURCE_FILES[files[index - 1]]


def test_tool_results_are_cut_exactly_as_the_lanes_cut_them(repo: Path, tmp_path: Path) -> None:
    pool = build_pool(
        PoolSources(specs=[write_spec(tmp_path / "s", "big", ["data/big.txt"], repo)])
    )
    content = pool.runs[0].turns[1].messages[-1]["content"]
    assert content == read_file(WorkingTree(repo), "data/big.txt")
    assert content.endswith("[truncated: 8,800 of 20,800 characters not shown]")


def test_depth_estimate_is_characters_of_messages_and_tools_over_three(
    repo: Path, tmp_path: Path
) -> None:
    pool = build_pool(PoolSources(specs=[write_spec(tmp_path / "s", "d", ["**/*"], repo)]))
    for turn in pool.runs[0].turns:
        assert turn.depth_estimate == depth_estimate(turn.messages, turn.tools)
    depths = [turn.depth_estimate for turn in pool.runs[0].turns]
    assert depths == sorted(depths)


def test_files_are_read_at_the_commit_not_from_disk(repo: Path, tmp_path: Path) -> None:
    first = git(repo, "rev-parse", "HEAD")
    second = commit_all(repo, {"pkg/small.py": "def small():\n    return 2\n"}, "change")
    write_files(repo, {"pkg/small.py": "uncommitted\n"})
    specs = tmp_path / "specs"
    write_spec(specs, "at-head", ["pkg/small.py"], repo)
    write_spec(specs, "at-first", ["pkg/small.py"], repo, commit=first[:10])
    pool = build_pool(PoolSources(specs=[specs]))
    contents = {run.run_id: run.turns[1].messages[-1]["content"] for run in pool.runs}
    assert contents == {
        "at-first": "def small():\n    return 1\n",
        "at-head": "def small():\n    return 2\n",
    }
    commits = sorted(p.commit or "" for p in pool.provenances)
    assert commits == sorted([first, second])
    assert all(p.to_json()["source"] == "git" for p in pool.provenances)


def test_a_subfolder_of_a_repository_reads_paths_relative_to_itself(
    repo: Path, tmp_path: Path
) -> None:
    pool = build_pool(
        PoolSources(specs=[write_spec(tmp_path / "s", "sub", ["small.py"], repo / "pkg")])
    )
    assert pool.runs[0].turns[1].messages[-1]["content"] == SOURCE_FILES["pkg/small.py"]
    assert pool.provenances[0].repository == "pkg"


def test_a_folder_outside_git_is_read_from_disk_with_file_hashes(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_files(plain, SOURCE_FILES)
    pool = build_pool(
        PoolSources(specs=[write_spec(tmp_path / "s", "plain", ["pkg/small.py"], plain)])
    )
    (provenance,) = pool.provenances
    assert provenance.commit is None
    data = provenance.to_json()
    assert data["source"] == "working-tree"
    assert list(data["files"]) == ["pkg/small.py"]
    assert len(data["files"]["pkg/small.py"]) == 64


def test_an_untracked_folder_inside_a_checkout_is_read_from_disk(
    repo: Path, tmp_path: Path
) -> None:
    write_files(repo / "venv" / "site", {"mod.py": "M = 1\n"})
    pool = build_pool(
        PoolSources(specs=[write_spec(tmp_path / "s", "venv", ["mod.py"], repo / "venv/site")])
    )
    assert pool.runs[0].turns[1].messages[-1]["content"] == "M = 1\n"
    assert pool.provenances[0].commit is None


def test_without_git_a_plain_folder_still_works(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_files(plain, SOURCE_FILES)
    spec = write_spec(tmp_path / "s", "nogit", ["README.md"], plain)
    pool = build_pool(PoolSources(specs=[spec]), git="no-such-git-binary")
    assert pool.turn_count == 2


def test_pool_hash_is_stable_and_follows_content(repo: Path, tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    write_spec(specs, "a", ["pkg/*.py"], repo)
    write_spec(specs, "b", ["README.md", "data/big.txt"], repo)
    first = build_pool(PoolSources(specs=[specs]))
    again = build_pool(PoolSources(specs=[specs / "b.toml", specs / "a.toml"]))
    assert first.sha256 == again.sha256
    commit_all(repo, {"README.md": "# changed\n"}, "edit")
    assert build_pool(PoolSources(specs=[specs])).sha256 != first.sha256


def test_sample_specs_is_seeded_and_a_subset(repo: Path, tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    for number in range(12):
        write_spec(specs, f"spec-{number:02d}", ["README.md"], repo)
    pool = build_pool(PoolSources(specs=[specs], sample_specs=4, seed=0))
    chosen = [run.run_id for run in pool.runs]
    assert len(chosen) == 4
    assert (pool.specs_found, pool.specs_used) == (12, 4)
    assert chosen == [
        run.run_id for run in build_pool(PoolSources(specs=[specs], sample_specs=4)).runs
    ]
    others = {
        tuple(
            run.run_id
            for run in build_pool(PoolSources(specs=[specs], sample_specs=4, seed=s)).runs
        )
        for s in range(1, 6)
    }
    assert others - {tuple(chosen)}
    assert pool.notes == ("sampled 4 of 12 specs with seed 0",)


def test_select_specs_refuses_zero(repo: Path, tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, "one", ["README.md"], repo))
    with pytest.raises(BadInput, match="at least 1"):
        select_specs([spec], 0, 0)
    assert select_specs([spec], 5, 0) == [spec]


def events_line(**event: object) -> str:
    return json.dumps(event) + "\n"


def payload(*contents: str) -> dict[str, object]:
    roles = ["system", "user", "assistant", "tool"]
    return {
        "messages": [
            {"role": roles[min(i, 3)], "content": text} for i, text in enumerate(contents)
        ],
        "tools": tool_definitions(),
    }


def test_lane_records_give_the_payloads_as_sent(tmp_path: Path) -> None:
    lanes = tmp_path / "lanes"
    (lanes / "run-a").mkdir(parents=True)
    (lanes / "run-a" / "events.jsonl").write_text(
        events_line(event="start", spec="x")
        + events_line(event="turn", payload=payload("sys", "plan"))
        + events_line(event="turn", payload=payload("sys", "plan", "call", "result"))
        + events_line(event="turn", index=1, payload=payload("retry"))
        + '{"event": "turn", "payl',
        encoding="utf-8",
    )
    (lanes / "other").mkdir()
    (lanes / "other" / "events.jsonl").write_text(
        events_line(event="turn", run_id="named", index=5, payload=payload("s", "u")),
        encoding="utf-8",
    )
    pool = build_pool(PoolSources(from_lanes=[lanes]))
    runs = {run.run_id: run for run in pool.runs}
    assert set(runs) == {"run-a", "named"}
    assert [t.index for t in runs["run-a"].turns] == [0, 1]
    assert runs["run-a"].turns[1].messages == payload("sys", "plan", "call", "result")["messages"]
    assert runs["named"].turns[0].id == "named#5"
    assert any("unfinished last line" in note for note in pool.notes)
    assert any("1 repeated turn event" in note for note in pool.notes)


def test_lane_records_give_each_turn_its_think_time(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(
        events_line(event="start", t=100.0, mono=5.0)
        + events_line(event="turn", index=0, t=100.0, mono=5.0, payload=payload("s", "u"))
        + events_line(event="reply", index=0, t=102.0, mono=7.0)
        + events_line(event="turn", index=1, t=110.0, mono=15.5, payload=payload("s", "u", "c"))
        + events_line(event="reply", index=1, t=111.0, mono=16.5)
        # a retry of turn 2: its first send counts, and the think time ends there
        + events_line(event="turn", index=2, t=112.0, payload=payload("s", "u", "c", "r"))
        + events_line(event="turn", index=2, t=130.0, payload=payload("again"))
        + events_line(event="reply", index=2, t=131.0, mono=30.0)
        + events_line(event="turn", index=3, mono=29.0, payload=payload("s", "u", "c", "r", "x")),
        encoding="utf-8",
    )
    pool = build_pool(PoolSources(from_lanes=[tmp_path]))
    # 8.5 s on the monotonic clock; 1 s by epoch seconds where turn 2 has no monotonic time;
    # a send before the reply it follows (3) is no think time at all
    assert [turn.think_s for turn in pool.runs[0].turns] == [0.0, 8.5, 1.0, None]


def test_the_pool_notes_how_many_it_took_for_unknown(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(
        events_line(event="turn", index=0, mono=1.0, payload=payload("s", "u"))
        + events_line(event="reply", index=0, mono=2.0)
        + events_line(event="turn", index=1, mono=2.0 + 1e9, payload=payload("s", "u", "c")),
        encoding="utf-8",
    )
    pool = build_pool(PoolSources(from_lanes=[tmp_path]))
    assert [turn.think_s for turn in pool.runs[0].turns] == [0.0, None]
    assert any(
        "1 turn(s) whose think time cannot be true" in note and "counted unknown" in note
        for note in pool.notes
    ), pool.notes


def test_lane_records_without_replies_have_no_think_time(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(
        events_line(event="turn", t=1.0, payload=payload("s", "u"))
        + events_line(event="turn", t=9.0, payload=payload("s", "u", "c")),
        encoding="utf-8",
    )
    assert [t.think_s for t in build_pool(PoolSources(from_lanes=[tmp_path])).runs[0].turns] == [
        None,
        None,
    ]


def test_transcript_timestamps_give_think_times_and_are_not_sent(tmp_path: Path) -> None:
    conversation = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u", "timestamp": "2026-01-01T10:00:00Z"},
        {"role": "assistant", "content": "c", "timestamp": "2026-01-01T10:00:05Z"},
        {"role": "tool", "content": "r", "timestamp": "2026-01-01T10:00:35+00:00"},
        {"role": "assistant", "content": "a", "timestamp": 1767261640.0},
        {"role": "tool", "content": "r2", "timestamp": "not a time"},
        {"role": "assistant", "content": "b"},
    ]
    plain = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"id": "timed", "messages": conversation})
        + "\n"
        + json.dumps({"id": "plain", "messages": plain})
        + "\n",
        encoding="utf-8",
    )
    runs = {run.run_id: run for run in build_pool(PoolSources(from_transcripts=[path])).runs}
    # the tool result came 30 s after the answer before; the last tool result has no readable time
    assert [t.think_s for t in runs["timed"].turns] == [0.0, 30.0, None]
    assert all("timestamp" not in m for t in runs["timed"].turns for m in t.messages)
    assert [t.think_s for t in runs["plain"].turns] == [None]


def test_a_bad_line_before_the_last_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(
        "not json\n" + events_line(event="turn", payload=payload("s", "u")), encoding="utf-8"
    )
    with pytest.raises(BadInput, match="events.jsonl:1: not valid JSON"):
        build_pool(PoolSources(from_lanes=[tmp_path]))


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"event": "turn"}, "needs a 'payload' object"),
        ({"event": "turn", "payload": {"messages": []}}, "non-empty list"),
        ({"event": "turn", "payload": {"messages": [{"role": "bot"}]}}, "role 'bot'"),
        ({"event": "turn", "index": -1, "payload": payload("s")}, "'index' must be"),
        ({"event": "turn", "run_id": 3, "payload": payload("s")}, "'run_id' must be"),
        ({"event": "turn", "payload": {"messages": [{"role": "user"}], "tools": 1}}, "'tools'"),
    ],
)
def test_malformed_turn_events_are_refused(
    tmp_path: Path, event: dict[str, object], message: str
) -> None:
    (tmp_path / "events.jsonl").write_text(json.dumps(event) + "\n\n", encoding="utf-8")
    with pytest.raises(BadInput, match=message):
        build_pool(PoolSources(from_lanes=[tmp_path]))


def test_lanes_folder_must_exist_and_hold_records(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such lanes folder"):
        build_pool(PoolSources(from_lanes=[tmp_path / "missing"]))
    with pytest.raises(BadInput, match="no events.jsonl file under"):
        build_pool(PoolSources(from_lanes=[tmp_path]))


def test_transcripts_give_every_prefix_before_an_assistant_message(tmp_path: Path) -> None:
    conversation = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": "a2"},
    ]
    path = tmp_path / "chats.jsonl"
    path.write_text(
        json.dumps({"messages": conversation})
        + "\n\n"
        + json.dumps({"id": "tooled", "messages": conversation[:3], "tools": tool_definitions()})
        + "\n"
        + json.dumps({"messages": conversation[:2]})
        + "\n",
        encoding="utf-8",
    )
    pool = build_pool(PoolSources(from_transcripts=[path]))
    runs = {run.run_id: run for run in pool.runs}
    assert set(runs) == {"chats.jsonl:1", "tooled"}
    assert [t.messages for t in runs["chats.jsonl:1"].turns] == [conversation[:2], conversation[:4]]
    assert runs["tooled"].turns[0].tools == tool_definitions()
    assert runs["chats.jsonl:1"].turns[0].tools == []
    assert pool.notes == (f"1 transcript(s) in {path} hold no assistant message",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # a bare array is read as the messages of a chat log
        ("[1, 2]", "message 0 is not a JSON object"),
        ('"hi"', "must be a JSON object with 'messages', or a messages array"),
        ('{"messages": "hi"}', "non-empty list"),
        ('{"messages": [{"role": "user"}], "id": ""}', "'id' must be"),
        ("{broken", "not valid JSON"),
        ('{"messages": [{"role": "user", "content": NaN}]}', "t.jsonl:1: holds the non-finite"),
        ('{"messages": [], "n": 1e999}', "t.jsonl:1: holds the number 1e999, too large"),
        ("[" * 100_000 + "]" * 100_000, "t.jsonl:1: nested more than 64 levels deep"),
    ],
)
def test_bad_transcript_lines_are_refused(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(BadInput, match=message):
        build_pool(PoolSources(from_transcripts=[path]))


def test_an_empty_pool_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "u"}]}) + "\n")
    with pytest.raises(BadInput, match="the pool is empty"):
        build_pool(PoolSources(from_transcripts=[path]))
    with pytest.raises(BadInput, match="no such transcript file"):
        build_pool(PoolSources(from_transcripts=[tmp_path / "missing.jsonl"]))


def test_no_source_and_stray_sample_are_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="give --specs"):
        build_pool(PoolSources())
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user"}, {"role": "assistant"}]}) + "\n")
    with pytest.raises(BadInput, match="--sample-specs needs --specs"):
        build_pool(PoolSources(from_transcripts=[path], sample_specs=3))


def test_duplicate_run_ids_across_sources_are_refused() -> None:
    with pytest.raises(BadInput, match="run id 'x' appears twice"):
        make_pool([synthetic_run("x", [10]), synthetic_run("x", [20])])


@pytest.mark.parametrize(
    ("spec_args", "message"),
    [
        ({"files": ["README.md"], "repository": "missing-repo"}, "repository folder not found"),
        ({"files": ["README.md"], "commit": "no-such-ref"}, "commit 'no-such-ref' not found"),
        ({"files": ["nope.py"]}, "file not found in"),
        ({"files": ["docs/*.md"]}, "matches 'docs/\\*.md'"),
        ({"files": ["README.md"], "extra": 'owner = "me"\n'}, "unknown key 'owner'"),
    ],
)
def test_bad_specs_are_one_clear_error(
    repo: Path, tmp_path: Path, spec_args: dict[str, object], message: str
) -> None:
    args: dict[str, object] = {"repository": repo, **spec_args}
    spec = write_spec(tmp_path / "specs", "bad", **args)  # type: ignore[arg-type]
    with pytest.raises(BadInput, match=message):
        build_pool(PoolSources(specs=[spec]))


def test_a_commit_in_a_folder_outside_git_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_files(plain, SOURCE_FILES)
    spec = write_spec(tmp_path / "s", "c", ["README.md"], plain, commit="HEAD")
    with pytest.raises(BadInput, match="is not in a git repository"):
        build_pool(PoolSources(specs=[spec]))
    with pytest.raises(BadInput, match="git is not installed"):
        build_pool(PoolSources(specs=[spec]), git="no-such-git-binary")


def test_a_clean_checkout_reads_the_same_through_git_and_from_disk(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    at_commit, on_disk = GitTree(repo, "", head), WorkingTree(repo)
    assert list(at_commit.list_files()) == list(on_disk.list_files())
    for path in [*SOURCE_FILES, "pkg", "nope.py", "../x"]:
        assert read_file(at_commit, path) == read_file(on_disk, path)
        assert read_file(at_commit, path, 2, 3) == read_file(on_disk, path, 2, 3)
    for folder in (".", "pkg", "pkg/sub", "nope", "README.md"):
        assert list_dir(at_commit, folder) == list_dir(on_disk, folder)


def test_git_failures_are_the_tools_own_errors(repo: Path) -> None:
    with pytest.raises(GitFailed, match="ls-tree"):
        GitTree(repo, "", "0" * 40).list_files()
    assert GitFailed("x").exit_code == 1


def test_a_commit_past_the_entry_cap_is_refused_not_cut(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    entries = len(SOURCE_FILES) + 3  # and the folders pkg, pkg/sub and data, as on disk
    assert len(WorkingTree(repo, max_entries=entries).list_files()) == len(SOURCE_FILES)
    assert len(GitTree(repo, "", head, max_entries=entries).list_files()) == len(SOURCE_FILES)
    with pytest.raises(TreeTooLarge, match=f"more than {entries - 1} files and folders at commit"):
        GitTree(repo, "", head, max_entries=entries - 1).list_files()


def test_a_commit_past_the_depth_cap_is_refused_naming_the_deep_folder(tmp_path: Path) -> None:
    deep = "/".join(f"l{level}" for level in range(MAX_TREE_DEPTH + 1))
    root = tmp_path / "deep"
    head = make_repo(root, {"README.md": "hello\n", f"{deep}/bottom.txt": "x\n"})
    shallow = GitTree(root, "", head, max_depth=MAX_TREE_DEPTH + 1)
    assert list(shallow.list_files()) == ["README.md", f"{deep}/bottom.txt"]
    with pytest.raises(TreeTooLarge, match=f"more than {MAX_TREE_DEPTH} levels deep"):
        GitTree(root, "", head).list_files()
    spec = write_spec(tmp_path / "specs", "deep", ["README.md"], root)
    with pytest.raises(BadInput, match=r"deep.toml\): repository .* levels deep"):
        build_pool(PoolSources(specs=[spec]))

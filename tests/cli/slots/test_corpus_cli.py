"""`vibey-gh slots corpus` through click: every input mode, --show, and every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support.repos import make_repo
from vibey_gh.cli.main import cli
from vibey_gh.lanes.tools import MAX_TREE_DEPTH

FILES = {
    "README.md": "# tiny\n",
    "src/a.py": "A = 1\n" * 40,
    "src/b.py": "B = 2\n" * 400,
    "src/c.py": "C = 3\n" * 900,
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, FILES)
    return root


def spec(folder: Path, spec_id: str, repository: Path, files: list[str], extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec_id}.toml"
    path.write_text(
        f'id = "{spec_id}"\ntitle = "t"\ntask = "read"\nrepository = "{repository}"\n'
        f"files = {json.dumps(files)}\n{extra}",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def specs(tmp_path: Path, repo: Path) -> Path:
    folder = tmp_path / "specs"
    spec(folder, "one", repo, ["README.md", "src/*.py"])
    spec(folder, "two", repo, ["src/c.py", "src/a.py", "src/b.py"])
    return folder


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["slots", "corpus", *args])


def test_build_from_specs_writes_the_file_and_reports_json(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "corpus.json"
    result = run(
        "--specs",
        str(specs),
        "--window",
        "4096",
        "--segment-turns",
        "1",
        "--segments-per-stratum",
        "1",
        "--out",
        str(out),
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["path"] == str(out)
    assert summary["window"] == 4096
    assert summary["pool_turns"] == 5 + 4
    assert len(summary["strata"]) == 4
    assert summary["turns"] == sum(summary["strata"])
    assert json.loads(out.read_text(encoding="utf-8"))["corpus_sha256"] == summary["corpus_sha256"]


def test_the_same_command_twice_gives_the_same_bytes(specs: Path, tmp_path: Path) -> None:
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    for out in outs:
        assert run("--specs", str(specs), "--window", "4096", "--out", str(out)).exit_code == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_show_prints_a_summary_and_json(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    assert run("--specs", str(specs), "--window", "4096", "--out", str(out)).exit_code == 0
    shown = run("--show", str(out), "--json")
    assert shown.exit_code == 0
    data = json.loads(shown.stdout)
    for key in ("corpus_sha256", "pool_sha256", "window", "seed", "segments", "turns", "strata"):
        assert key in data
    assert data["seed"] == 0
    assert isinstance(data["strata"], list) and len(data["strata"]) == 4
    text = run("--show", str(out))
    assert text.exit_code == 0
    assert data["corpus_sha256"] in text.stdout
    assert "strata (by estimate):" in text.stdout


def test_window_defaults_to_the_config(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    result = run("--specs", str(specs), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["window"] == 4096


def test_from_lanes_and_from_transcripts(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "b"},
    ]
    lanes = tmp_path / "lanes" / "lane-1"
    lanes.mkdir(parents=True)
    (lanes / "events.jsonl").write_text(
        "".join(
            json.dumps({"event": "turn", "index": i, "payload": {"messages": messages[:n]}}) + "\n"
            for i, n in enumerate((2, 4))
        ),
        encoding="utf-8",
    )
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(json.dumps({"messages": messages}) + "\n", encoding="utf-8")
    out = tmp_path / "c.json"
    result = run(
        "--from-lanes",
        str(tmp_path / "lanes"),
        "--from-transcripts",
        str(transcripts),
        "--shape",
        "segments",
        "--segment-turns",
        "2",
        "--out",
        str(out),
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["pool_runs"], summary["pool_turns"]) == (2, 4)
    assert summary["strata"] == [2, 0, 0, 0]
    assert summary["shape"] == "segments"
    default = run("--from-lanes", str(tmp_path / "lanes"), "--out", str(out), "--json")
    assert default.exit_code == 0, default.output
    summary = json.loads(default.stdout)
    assert (summary["shape"], summary["segments"], summary["turns"]) == ("runs", 1, 2)
    assert (summary["timed_turns"], summary["think_s_total"]) == (0, 0)
    assert json.loads(out.read_text())["shape"] == "runs"


def test_specs_default_to_segments_and_take_runs_when_asked(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    result = run("--specs", str(specs), "--window", "8192", "--out", str(out), "--json")
    assert json.loads(result.stdout)["shape"] == "segments"
    result = run("--specs", str(specs), "--window", "8192", "--shape", "runs", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "whole runs" in result.output
    assert json.loads(out.read_text())["shape"] == "runs"


def test_chat_logs_of_bare_messages_arrays_build_the_same_pool(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "What does a.py return?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "def one():\n    return 1\n"},
        {"role": "assistant", "content": "It returns 1."},
    ]
    bare, wrapped = tmp_path / "export.jsonl", tmp_path / "t.jsonl"
    bare.write_text(json.dumps(messages) + "\n" + json.dumps(messages[:3]) + "\n")
    wrapped.write_text(
        json.dumps({"id": "export.jsonl:1", "messages": messages})
        + "\n"
        + json.dumps({"id": "export.jsonl:2", "messages": messages[:3]})
        + "\n"
    )
    summaries = []
    for option, path, out in (
        ("--from-chat-logs", bare, tmp_path / "a.json"),
        ("--from-transcripts", wrapped, tmp_path / "b.json"),
    ):
        result = run(option, str(path), "--out", str(out), "--json")
        assert result.exit_code == 0, result.output
        summaries.append(json.loads(result.stdout))
    assert (summaries[0]["pool_runs"], summaries[0]["pool_turns"]) == (2, 3)
    assert summaries[0]["pool_sha256"] == summaries[1]["pool_sha256"]


def test_a_chat_log_line_that_is_neither_is_bad_input(tmp_path: Path) -> None:
    log = tmp_path / "export.jsonl"
    log.write_text('"just a string"\n')
    expect_bad_input(
        run("--from-chat-logs", str(log), "--out", str(tmp_path / "c.json")),
        "or a messages array",
    )


def test_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    result = run("--demo", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["strata"] == [2, 2, 2, 2]


def expect_bad_input(result: Result, message: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert message in lines[0]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d, r: spec(d, "x", d / "missing", ["a"]), "repository folder not found"),
        (lambda d, r: spec(d, "x", r, ["README.md"], 'commit = "nope"\n'), "commit 'nope'"),
        (lambda d, r: spec(d, "x", r, ["README.md"], 'owner = "me"\n'), "unknown key 'owner'"),
        (lambda d, r: spec(d, "x", r, ["docs/*.md"]), "no file in"),
        (lambda d, r: spec(d, "x", r, ["missing.py"]), "file not found in"),
    ],
)
def test_bad_specs_exit_2_with_one_line_and_no_file(
    tmp_path: Path, repo: Path, make: object, message: str
) -> None:
    folder = tmp_path / "bad-specs"
    make(folder, repo)  # type: ignore[operator]
    out = tmp_path / "c.json"
    expect_bad_input(run("--specs", str(folder), "--out", str(out)), message)
    assert not out.exists()
    assert list(tmp_path.glob("*.json")) == []


def test_a_repository_too_deep_to_list_is_bad_input(tmp_path: Path) -> None:
    deep = tmp_path / "deep"
    bottom = deep.joinpath(*(f"l{level}" for level in range(MAX_TREE_DEPTH + 2)))
    bottom.mkdir(parents=True)
    (deep / "README.md").write_text("hello\n", encoding="utf-8")
    folder = tmp_path / "deep-specs"
    spec(folder, "x", deep, ["README.md"])
    out = tmp_path / "c.json"
    expect_bad_input(
        run("--specs", str(folder), "--out", str(out)), f"x.toml): repository {deep} has folders"
    )
    assert not out.exists()


def test_a_specs_folder_too_deep_to_walk_is_bad_input(tmp_path: Path, repo: Path) -> None:
    folder = tmp_path / "specs"
    spec(
        folder.joinpath(*(f"l{level}" for level in range(MAX_TREE_DEPTH + 2))),
        "x",
        repo,
        ["README.md"],
    )
    out = tmp_path / "c.json"
    expect_bad_input(
        run("--specs", str(folder), "--out", str(out)),
        f"{folder} has folders more than {MAX_TREE_DEPTH} levels deep",
    )
    assert not out.exists()


def test_a_failed_build_leaves_an_existing_file_untouched(tmp_path: Path, repo: Path) -> None:
    out = tmp_path / "c.json"
    out.write_text("previous", encoding="utf-8")
    folder = tmp_path / "s"
    spec(folder, "x", repo, ["README.md"])
    expect_bad_input(
        run("--specs", str(folder), "--window", "300", "--max-tokens", "16", "--out", str(out)),
        "smaller than turn 0",
    )
    assert out.read_text(encoding="utf-8") == "previous"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_an_empty_pool_is_bad_input(tmp_path: Path) -> None:
    transcripts = tmp_path / "t.jsonl"
    transcripts.write_text(json.dumps({"messages": [{"role": "user"}]}) + "\n", encoding="utf-8")
    out = tmp_path / "c.json"
    expect_bad_input(
        run("--from-transcripts", str(transcripts), "--out", str(out)), "the pool is empty"
    )
    assert not out.exists()


def test_a_tampered_corpus_is_refused_by_show(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    assert run("--specs", str(specs), "--window", "4096", "--out", str(out)).exit_code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    data["seed"] = 7
    out.write_text(json.dumps(data), encoding="utf-8")
    expect_bad_input(run("--show", str(out)), "does not match its corpus_sha256")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "nothing to do"),
        (("--demo",), "--out FILE is required"),
        (("--demo", "--show", "x.json"), "--show reads a corpus"),
        (("--demo", "--specs", "x", "--out", "c.json"), "--demo uses the shipped specs"),
        (("--demo", "--segment-turns", "0", "--out", "c.json"), "--segment-turns must be"),
        (("--demo", "--segments-per-stratum", "0", "--out", "c.json"), "--segments-per-stratum"),
        (
            ("--specs", "no-such-folder", "--out", "c.json"),
            "no such spec file or folder: no-such-folder (a lane spec is a TOML file, one a "
            "lane; `vibey-gh slots corpus --demo` builds a corpus from the shipped specs)",
        ),
        (
            ("--show", "missing.json"),
            "corpus file not found: missing.json (build one with `vibey-gh slots corpus`, or "
            "measure on the shipped demo corpus with `vibey-gh slots calibrate --demo`)",
        ),
        (
            ("--demo", "--shape", "runs", "--segment-turns", "2", "--out", "c.json"),
            "--segment-turns is for --shape segments",
        ),
    ],
)
def test_bad_options_exit_2(args: tuple[str, ...], message: str) -> None:
    expect_bad_input(run(*args), message)
    assert not Path("c.json").exists()


@pytest.mark.parametrize("window", ["100", str(1 << 25)])
def test_a_window_outside_the_config_s_range_is_a_usage_error(window: str) -> None:
    result = run("--demo", "--window", window, "--out", "c.json")
    assert result.exit_code == 2
    assert "256<=x<=16777216" in result.stderr
    assert not Path("c.json").exists()


def test_sample_specs_zero_is_bad_input(specs: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    expect_bad_input(
        run("--specs", str(specs), "--sample-specs", "0", "--out", str(out)),
        "--sample-specs must be at least 1",
    )


def test_help_has_examples() -> None:
    result = CliRunner().invoke(cli, ["slots", "corpus", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output
    assert "vibey-gh slots corpus --show corpus.json --json" in result.output


def test_a_timed_transcript_gives_whole_runs_that_say_their_think_time(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "u", "timestamp": "2026-03-01T09:00:00Z"},
        {"role": "assistant", "content": "a", "timestamp": "2026-03-01T09:00:02Z"},
        {"role": "tool", "content": "r", "timestamp": "2026-03-01T09:00:17Z"},
        {"role": "assistant", "content": "b", "timestamp": "2026-03-01T09:00:19Z"},
    ]
    path, out = tmp_path / "t.jsonl", tmp_path / "c.json"
    path.write_text(json.dumps({"messages": messages}) + "\n", encoding="utf-8")
    result = run("--from-transcripts", str(path), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 whole run (2 turns" in result.stdout
    assert "think time known for 2 of 2 turns, 15.0 s in all" in result.stdout
    turns = json.loads(out.read_text())["segments"][0]["turns"]
    assert [turn.get("think_s") for turn in turns] == [0.0, 15.0]


def test_a_clock_jump_in_a_transcript_is_counted_unknown_and_said(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "u", "timestamp": "2026-03-01T09:00:00Z"},
        {"role": "assistant", "content": "a", "timestamp": "2026-03-01T09:00:02Z"},
        {"role": "tool", "content": "r", "timestamp": "9999-03-01T09:00:17Z"},
        {"role": "assistant", "content": "b", "timestamp": "9999-03-01T09:00:19Z"},
    ]
    path, out = tmp_path / "t.jsonl", tmp_path / "c.json"
    path.write_text(json.dumps({"messages": messages}) + "\n", encoding="utf-8")
    result = run("--from-transcripts", str(path), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "think time known for 1 of 2 turns, 0.0 s in all" in result.stdout
    assert (
        f"note: transcripts in {path}: 1 turn(s) whose think time cannot be true (negative, "
        "over a day, or dated outside 2000-2099) are counted unknown"
    ) in result.stderr

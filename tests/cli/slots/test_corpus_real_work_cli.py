"""`vibey-gh slots corpus --from-traces / --from-sessions` through click: byte-identical
reruns, and bad input as one line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vibey_gh.cli.main import cli

SAMPLES = Path("/work/shared/data/agent-traces")
SESSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sessions"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["slots", "corpus", *args])


def build_twice(tmp_path: Path, *args: str) -> tuple[bytes, bytes]:
    outputs = []
    for name in ("first.json", "second.json"):
        out = tmp_path / name
        result = run(*args, "--out", str(out))
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    return outputs[0], outputs[1]


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"the sample traces are absent ({SAMPLES})")
def test_the_sample_traces_give_the_same_bytes_on_rerun(tmp_path: Path) -> None:
    first, second = build_twice(
        tmp_path, "--from-traces", str(SAMPLES), "--window", "16384", "--fit", "drop"
    )
    assert first == second
    assert b'"fit":"drop"' in first


def test_the_fixture_sessions_give_the_same_bytes_on_rerun(tmp_path: Path) -> None:
    first, second = build_twice(
        tmp_path,
        "--from-sessions",
        str(SESSIONS),
        "--window",
        "4096",
        "--shape",
        "segments",
        "--segment-turns",
        "1",
        "--segments-per-stratum",
        "2",
    )
    assert first == second
    assert b'"agent":"codex"' in first and b'"agent":"claude-code"' in first


@pytest.mark.parametrize(
    ("name", "text", "field"),
    [
        ("trace.json", '{"id": "t", "block_size": 64, "requests": [{"out": 3}]}', "requests[0].in"),
        ("trace.json", "not json", "not valid JSON"),
        (
            "trace.json",
            '{"id": "t", "block_size": 64, "requests": [{"in": 9, "think_time": -2}]}',
            "requests[0].think_time",
        ),
    ],
)
def test_a_bad_trace_is_one_line_exit_2_and_no_corpus(
    tmp_path: Path, name: str, text: str, field: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "corpus.json"
    result = run("--from-traces", str(path), "--window", "4096", "--out", str(out))
    assert result.exit_code == 2
    assert field in result.output and str(path) in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_session_of_unknown_records_is_exit_2_and_no_corpus(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text('{"type": "what"}\n')
    out = tmp_path / "corpus.json"
    result = run("--from-sessions", str(path), "--window", "4096", "--out", str(out))
    assert result.exit_code == 2
    assert str(path) in result.output
    assert not out.exists()


def test_a_whole_run_corpus_too_small_to_decide_is_named_at_corpus_and_calibrate_time(
    tmp_path: Path,
) -> None:
    out = tmp_path / "runs.json"
    built = run("--from-sessions", str(SESSIONS), "--window", "32768", "--out", str(out))
    assert built.exit_code == 0, built.output
    assert "warning: too few runs for a run-level estimate: 2 whole run(s)" in built.stderr
    assert "at least 32" in built.stderr
    # at the start of calibrate, before anything else is checked (here: a window it refuses)
    started = CliRunner().invoke(
        cli, ["slots", "calibrate", "--corpus", str(out), "--max-slots", "4", "--window", "4096"]
    )
    assert started.exit_code == 2
    warning, refusal = started.stderr.splitlines()
    assert warning.startswith("warning: too few runs") and "at least 8" in warning
    assert "corpus's window 32,768" in refusal

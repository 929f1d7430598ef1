"""`vibey-gh slots corpus --fill-window` through click: the configured runner counts the
filled run's depth (the simulated runner here, a real server), Ollama's corpora say they went
by the estimate, and the same inputs give the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.support.ports import free_port
from tests.support.repos import make_repo
from vibey_gh.cli.main import cli

FILES = {f"pkg/mod{n:02d}.py": f"VALUE_{n} = {n}\n" * (20 + 7 * n) for n in range(40)}
WINDOW = 8192


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["slots", "corpus", *args])


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_repo(repo, FILES)
    path = tmp_path / "specs" / "short.toml"
    path.parent.mkdir()
    path.write_text(
        'id = "short"\ntitle = "Read short"\ntask = "Explain it."\n'
        f'repository = "{repo}"\nfiles = ["pkg/mod00.py"]\n'
    )
    return path


def use_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[local_models]\nrunner = "{runner}"\ncalibration_port = {free_port()}\n'
        f'production_url = "http://127.0.0.1:{free_port()}"\n'
    )
    monkeypatch.setenv("VIBEY_GH_CONFIG", str(config))


def fill(spec: Path, out: Path, *extra: str) -> Result:
    return run("--specs", str(spec), "--window", str(WINDOW), "--fill-window", "--out", str(out),
               "--json", *extra)  # fmt: skip


def fill_source(out: Path) -> dict[str, object]:
    (source,) = json.loads(out.read_text())["sources"]
    assert isinstance(source, dict)
    return source


def test_the_configured_runner_counts_the_fill_and_reruns_give_the_same_bytes(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_config(tmp_path, monkeypatch, "simulated")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for out in (first, second):
        result = fill(spec, out)
        assert result.exit_code == 0, result.output + result.stderr
    assert first.read_bytes() == second.read_bytes()
    source = fill_source(first)
    assert str(source["depth_counted_by"]).startswith("simulated tokenizer of ")
    deepest = source["deepest_counted"]
    # the fill leaves room for the config's output cap (768): prompt and answer fit the window
    room = WINDOW - 768
    assert isinstance(deepest, int) and 0.9 * room <= deepest <= room
    summary = json.loads(result.stdout)
    assert "by the runner's count" in summary["deepest_stratum"]
    assert summary["profile"]["origin"]["fill"][0]["deepest"] == deepest


def test_ollama_has_no_tokenizer_so_the_fill_goes_by_the_estimate_and_says_so(
    tmp_path: Path, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_config(tmp_path, monkeypatch, "ollama")
    out = tmp_path / "corpus.json"
    result = fill(spec, out)
    assert result.exit_code == 0, result.output + result.stderr
    assert "ollama has no tokenizer" in result.stderr
    source = fill_source(out)
    assert source["depth_counted_by"] == "estimate (characters ÷ 3)"
    assert "deepest_counted" not in source


def test_count_with_estimate_starts_no_runner_and_needs_fill_window(
    tmp_path: Path, spec: Path
) -> None:
    out = tmp_path / "corpus.json"
    # The default runner (embedded) is never started: the estimate is asked for.
    assert fill(spec, out, "--count-with", "estimate").exit_code == 0
    assert fill_source(out)["depth_counted_by"] == "estimate (characters ÷ 3)"
    refused = run("--specs", str(spec), "--count-with", "estimate", "--out", str(tmp_path / "x"))
    assert refused.exit_code == 2 and "--count-with is for --fill-window" in refused.stderr
    assert not (tmp_path / "x").exists()


def test_fill_window_over_traces_alone_starts_no_runner(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    requests = [{"t": 0, "type": "n", "in": 40, "out": 2, "hash_ids": [1, 2]}]
    trace.write_text(json.dumps({"id": "t", "block_size": 16, "requests": requests}))
    out = tmp_path / "corpus.json"
    result = run(
        "--from-traces", str(trace), "--window", "1024", "--fill-window", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "starting" not in result.stderr

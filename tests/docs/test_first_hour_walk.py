"""Every command `docs/guides/first-hour.md` tells a newcomer to run, run as written.

The guide is read, not copied: each `vibey-gh …` line of its shell blocks is run in order
(corpus first, as the guide says to build one before calibrating), each as its own process in
a folder holding what the guide says to create (a lane spec, transcripts, chat logs, lane
records). The runner is the shipped simulated one where the guide's runner cannot run here
(Ollama, a GPU's llama-server): the commands are the guide's, the config under them is this
machine's. What cannot run here at all (installing from a package index) is named with why.
The embedded demo sweep, minutes long, is walked by its own integration test.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.ports import free_port
from vibey_gh.config import load_config

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "first-hour.md"
PACKAGE = ROOT / "src" / "vibey_gh"
# installing from a package index or a checkout into a tool environment: no network, no pipx;
# copying the reader's own agent sessions (their files are the reader's, not this machine's)
NOT_RUN_HERE = ("pipx ", "uv tool ", "mkdir -p ~/corpus-sessions", "cp ~/")
# commands over the reader's own session files: not walked here (the session readers have
# their own tests over recorded sessions)
READERS_OWN = ("~/corpus-sessions", "sessions.json")
# runs a real model for minutes: walked by the integration test below
EMBEDDED_DEMO = "vibey-gh slots calibrate --demo"
DOCUMENTED_PORT = re.compile(r"--port \d+")
SHELL_BLOCK = re.compile(r"^( *)```sh\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
TOML_BLOCK = re.compile(r"^```toml\n(.*?)^```", re.DOTALL | re.MULTILINE)
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.DOTALL | re.MULTILINE)


def guide_lines() -> list[str]:
    """Each command line of the guide's shell blocks, its trailing comment dropped."""
    text = GUIDE.read_text(encoding="utf-8")
    lines = []
    for _indent, body in SHELL_BLOCK.findall(text):
        for line in body.splitlines():
            command = re.split(r"\s{2,}#", line.strip())[0].strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def walked_commands() -> list[str]:
    """The `vibey-gh` commands, corpus ones first, each once, in the guide's order."""
    commands = []
    for line in guide_lines():
        if any(own in line for own in READERS_OWN):
            continue
        if line.startswith("vibey-gh ") and line != EMBEDDED_DEMO and line not in commands:
            commands.append(line)
    return sorted(commands, key=lambda c: not c.startswith("vibey-gh slots corpus"))


def test_every_line_of_the_guide_is_walked_or_named() -> None:
    lines = guide_lines()
    completion = [line for line in lines if "_VIBEY_GH_COMPLETE" in line]
    unwalked = [
        line
        for line in lines
        if not line.startswith("vibey-gh ")
        and line not in completion
        and not line.startswith(NOT_RUN_HERE)
    ]
    assert unwalked == [], "a new kind of command in the guide: walk it here"
    assert EMBEDDED_DEMO in lines
    assert len(completion) == 3 and len(walked_commands()) >= 15


def test_the_guides_configs_are_valid(tmp_path: Path) -> None:
    blocks = TOML_BLOCK.findall(GUIDE.read_text(encoding="utf-8"))
    configs = [block for block in blocks if block.startswith("[local_models]")]
    assert len(configs) == 2, "the Ollama and the llama-server sections"
    for index, block in enumerate(configs):
        folder = tmp_path / str(index)
        folder.mkdir()
        (folder / "vibey-gh.toml").write_text(block, encoding="utf-8")
        config = load_config(folder, environ={})
        assert config.runner in ("ollama", "llama-server") and config.window == 32768


def _environment(state: Path) -> dict[str, str]:
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state), "COLUMNS": "80"}
    env.pop("VIBEY_GH_CONFIG", None)
    return env


def _argv(command: str) -> list[str]:
    words = shlex.split(DOCUMENTED_PORT.sub(f"--port {free_port()}", command))
    assert words[0] == "vibey-gh"
    return [sys.executable, "-m", "vibey_gh.cli.main", *words[1:]]


def _prepare(work: Path, state: Path) -> None:
    """What the guide tells the reader to have: a config, a lane spec in specs/, transcripts,
    an agent tool's export, and lane records in the state folder."""
    (work / "vibey-gh.toml").write_text(
        "[local_models]\n"
        'runner = "simulated"\n'
        "window = 32768\n"
        f"calibration_port = {free_port()}\n"
        f'production_url = "http://127.0.0.1:{free_port()}"\n'
        "min_step_seconds = 0.2\n"
        # a step ends once decided; one still undecided at its cap does not end the sweep, so
        # the cap leaves a busy machine the time to decide (at 2 s every sweep went on to 16)
        "max_step_seconds = 4.0\n"
        "[local_models.simulated]\n"
        "knee = 2\nnoise = 0.0\ntokens_per_second = 5000.0\n"
        # a gain must be clear (50%: the knee's doubling is) and one step without one ends the
        # sweep, so each of the guide's five calibrations is short: N = 1, 1, 2, 3
        "[local_models.bounds]\n"
        "min_gain = 0.5\npatience = 1\n",
        encoding="utf-8",
    )
    text = GUIDE.read_text(encoding="utf-8")
    spec = next(block for block in TOML_BLOCK.findall(text) if block.startswith("id = "))
    spec = re.sub(r'repository = "[^"]*"', f'repository = "{PACKAGE.as_posix()}"', spec)
    (work / "specs").mkdir()
    (work / "specs" / "state-layout.toml").write_text(spec, encoding="utf-8")
    # the guide's example lines, then longer conversations of the same shapes: a corpus
    # wants runs of three turns and more
    transcript, chat_log = JSON_BLOCK.findall(text)
    longer = [_conversation(run) for run in range(4)]
    (work / "chats.jsonl").write_text(
        transcript
        + "".join(json.dumps({"id": f"c{i}", "messages": m}) + "\n" for i, m in enumerate(longer)),
        encoding="utf-8",
    )
    (work / "agent-export.jsonl").write_text(
        chat_log + "".join(json.dumps(m) + "\n" for m in longer), encoding="utf-8"
    )
    _lane_records(state / "lanes")
    _traces(work / "traces")


def _traces(folder: Path) -> None:
    """Agent traces in the kv-cache-tester format, as the guide's section describes them."""
    from tests.slots.corpus.sources.test_traces import request, write_trace

    for name in ("a", "b", "c", "d"):
        requests = [request(64 * n, list(range(1, n + 1)), think_time=1.0) for n in (2, 4, 6, 8)]
        write_trace(folder, name, requests, block_size=64)


def _conversation(run: int) -> list[dict[str, object]]:
    """Three answers: the shortest run a corpus takes, so a step completes many of them."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Explain part {run} of the state layout."},
    ]
    for turn in range(2):
        messages.append({"role": "assistant", "content": f"Reading file {turn}."})
        messages.append({"role": "user", "content": "def f():\n    return 1\n" * (20 + run)})
    messages.append({"role": "assistant", "content": "Done."})
    return messages


def _lane_records(lanes: Path) -> None:
    """Lane records as `lane run` writes them (a lane of the simulated runner answers at its
    first turn; a corpus wants runs of three turns and more), enough of them (six) that a step
    of whole runs has the clusters an interval needs and ends once decided, not at its cap."""
    for run in range(6):
        folder = lanes / f"lane-{run}"
        folder.mkdir(parents=True)
        conversation = _conversation(run)
        ends = [i for i, m in enumerate(conversation) if m["role"] == "assistant"]
        events: list[dict[str, object]] = [{"event": "start", "spec": f"lane-{run}"}]
        for turn, end in enumerate(ends):
            payload = {"messages": conversation[:end]}
            events.append({"event": "turn", "index": turn, "payload": payload})
        (folder / "events.jsonl").write_text(
            "".join(json.dumps(event) + "\n" for event in events), encoding="utf-8"
        )


@pytest.mark.timeout(900)
def test_every_documented_command_runs_as_written(tmp_path: Path) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    _prepare(work, state)
    env = _environment(state)
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    for command in walked_commands():
        done = subprocess.run(
            _argv(command), cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, command
        outputs[command] = done
    doctor = outputs["vibey-gh doctor"].stdout
    assert "calibrate needs (ready):" in doctor and f"state folder: {state}" in doctor
    sweep = outputs["vibey-gh slots calibrate --corpus corpus.json"]
    assert "sweep complete: ideal " in sweep.stdout
    assert re.search(r"see it: +vibey-gh slots show [0-9a-f]{16}", sweep.stdout)
    assert "step 0 (1 of at most 18): N=1" in sweep.stderr, "progress goes to stderr"
    demo = outputs["vibey-gh slots calibrate --demo --runner simulated --min-step-seconds 2"]
    assert "sweep complete" in demo.stdout
    # asking what `allowed` would answer filed no calibration request
    assert "calibration requested" not in demo.stdout
    rows = list(csv.DictReader(io.StringIO(outputs["vibey-gh slots show --format csv"].stdout)))
    assert rows and float(rows[0]["turns_per_hour"]) > 0
    table = outputs["vibey-gh slots show --format markdown"].stdout
    assert "| step | slots × window | turns served | " in table
    assert (work / "report.html").is_file()
    for shell in ("bash", "zsh", "fish"):
        completion = subprocess.run(
            [sys.executable, "-m", "vibey_gh.cli.main"],
            env={**env, "_VIBEY_GH_COMPLETE": f"{shell}_source"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert completion.returncode == 0 and "vibey-gh" in completion.stdout, shell


@pytest.mark.integration
@pytest.mark.timeout(900)
def test_the_embedded_demo_runs_as_written_for_one_step(tmp_path: Path) -> None:
    """`vibey-gh slots calibrate --demo`, one step of it (--max-runs 1: the whole sweep takes
    minutes), on the real embedded runner and the shipped model. The step is the demo's at a
    quarter of its window, its answers short and its measurement 5 s (the demo corpus at 4096
    has 16 turns of up to 4096 tokens: minutes of prompt reading on two cores; at 1024, 4)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "vibey-gh.toml").write_text(
        f"[local_models]\ncalibration_port = {free_port()}\n"
        f'production_url = "http://127.0.0.1:{free_port()}"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            *_argv(EMBEDDED_DEMO),
            *("--max-runs", "1", "--min-step-seconds", "5", "--max-step-seconds", "5"),
            *("--window", "1024", "--max-tokens", "16"),
        ],
        cwd=work,
        env=_environment(tmp_path / "state"),
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, done.stderr
    assert "sweep paused (rerun to continue)" in done.stdout
    assert "step 0 (1 of at most 6): N=1" in done.stderr


def test_config_blocks_parse_as_toml() -> None:
    for block in TOML_BLOCK.findall(GUIDE.read_text(encoding="utf-8")):
        tomllib.loads(block)

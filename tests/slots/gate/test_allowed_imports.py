"""What `slots allowed` loads to answer from evidence, as a whole process.

The answer has a budget of 100 ms a process (bench/bench_allowed.py times it); most of what
it costs is importing. These tests hold the modules it must not need to its path — the CLI
framework, HTTP and async libraries, the report's plotting, `inspect` — by asking a new
interpreter what it loaded after answering from real, sealed evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_allowed import DAY, good_sweep

from tests.support.evidence import write_evidence_file
from vibey_gh.config import LocalModels
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.runners.registry import identify_production
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import evidence_path
from vibey_gh.state import StateLayout

WINDOW = 4096
# Each is tens of milliseconds, or pulls in what is: none answers the question.
NOT_ON_THE_PATH = (
    "click",
    "httpx",
    "asyncio",
    "ssl",
    "email",
    "http.client",
    "inspect",
    "ast",
    "dis",
    "tokenize",
    "statistics",
    # "decimal" is on the path since the records are msgspec structs: its C core loads it
    "fractions",
    "random",
    "tempfile",
    "csv",
    "subprocess",
    "matplotlib",
    "numpy",
    "psutil",
    "vibey_gh.slots.report",
    "vibey_gh.slots.measurement",
    "vibey_gh.slots.corpus",
    "vibey_gh.lanes",
    "vibey_gh.storm",
    "vibey_gh.runners.ollama.chat",
    "vibey_gh.runners.http.streaming",
    "vibey_gh.runners.llamacpp.api",  # the chat wire format; /props is read only for llama-server
    "vibey_gh.platforms.sensors",  # the device is described by its probe alone
    "encodings.idna",
)

PROBE = """
import json, sys
from vibey_gh.cli.entry import main
code = main(sys.argv[1:])
# a module set to load on first use and never read is not loaded
loaded = sorted(m for m in sys.modules if type(sys.modules[m]) is type(sys))
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def ask(tmp_path: Path, declaration: str) -> tuple[dict[str, object], set[str]]:
    config = tmp_path / "vibey-gh.toml"
    config.write_text(
        f"[local_models]\nconcurrent_runs = {declaration}\n"
        f'runner = "simulated"\nwindow = {WINDOW}\n'
    )
    env = {**os.environ, "VIBEY_GH_CONFIG": str(config), "VIBEY_GH_SLOTS_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "slots", "allowed", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0
    return json.loads(done.stdout), set(report["loaded"])


def plant_evidence(state: Path) -> None:
    """Sealed evidence for this machine and the simulated runner: the measured path."""
    config = LocalModels(concurrent_runs="measured", runner="simulated", window=WINDOW)
    layout = StateLayout(state)
    device = PlatformProbes.detect().device.describe()
    fingerprint = compute_fingerprint(device, identify_production(config, layout), WINDOW)
    write_evidence_file(
        evidence_path(layout, fingerprint.id), fingerprint, good_sweep(), time.time() - DAY
    )


@pytest.mark.parametrize("declaration", ["1", '"measured"'])
def test_answering_loads_none_of_the_heavy_modules(tmp_path: Path, declaration: str) -> None:
    plant_evidence(tmp_path)
    answer, loaded = ask(tmp_path, declaration)
    if declaration != "1":
        assert answer["reason_code"] == "measured" and answer["allowed"] == 2, answer
    found = [m for m in loaded for heavy in NOT_ON_THE_PATH if f"{m}.".startswith(f"{heavy}.")]
    assert found == []


def test_an_unmeasured_answer_loads_neither_the_judge_nor_the_figures(tmp_path: Path) -> None:
    answer, loaded = ask(tmp_path, '"measured"')  # no evidence: a request, nothing to judge
    assert answer["reason_code"] == "unmeasured", answer
    assert "vibey_gh.slots.gate.measured" in loaded
    unneeded = ("vibey_gh.slots.judging", "vibey_gh.slots.gate.judged", *NOT_ON_THE_PATH)
    assert [m for m in loaded for heavy in unneeded if f"{m}.".startswith(f"{heavy}.")] == []


def test_inspect_still_answers_when_something_reads_it(tmp_path: Path) -> None:
    """`inspect` is loaded on first use, not taken away: reading it after the answer works."""
    probe = (
        "import sys\n"
        "from vibey_gh.cli.entry import main\n"
        "main(['slots', 'allowed'])\n"
        "import inspect, dataclasses\n"
        "print(inspect.signature(lambda a, b=2: a), dataclasses.inspect.isclass(int))\n"
    )
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(tmp_path), "VIBEY_GH_CONFIG": "none.toml"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.splitlines()[-1] == "(a, b=2) True"

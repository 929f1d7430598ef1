"""The chart's shell scripts, run by the real /bin/sh with stand-ins for `ollama` and `vibey-gh`.

Ollama cannot run here, so a stand-in records how it was called (arguments and the environment
that matters) and answers as the real client does: `list` succeeds once a server answers,
`serve` runs until it is stopped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from deploy_support import CHART_SCRIPTS

FAKE_OLLAMA = """#!/bin/sh
printf '%s|%s|%s|%s|%s\\n' "$1" "$*" "${OLLAMA_HOST:-}" "${OLLAMA_NOPRUNE:-}" \
    "${OLLAMA_NUM_PARALLEL:-}" >>"$FAKE_DIR/ollama.log"
case "$1" in
serve)
    printf '%s\\n' "OLLAMA_CONTEXT_LENGTH=${OLLAMA_CONTEXT_LENGTH:-}" >>"$FAKE_DIR/serve.env"
    [ -n "${FAKE_SERVE_RETURNS:-}" ] && exit 0
    echo $$ >"$FAKE_DIR/serve.pid"
    exec sleep 20
    ;;
list)
    [ -z "${FAKE_LIST_FAILS:-}" ] || exit 1
    # like the real client: an answer only once the server it asks is up
    [ -z "${FAKE_LIST_NEEDS_SERVER:-}" ] || [ -f "$FAKE_DIR/serve.pid" ]
    ;;
pull) exit "${FAKE_PULL_STATUS:-0}" ;;
*) exit 64 ;;
esac
"""

FAKE_VIBEY_GH = """#!/bin/sh
printf '%s|%s\\n' "$*" "${VIBEY_GH_CONFIG:-}" >>"$FAKE_DIR/vibey-gh.log"
case "$1 $2" in
"slots allowed")
    if [ -n "${FAKE_ALLOWED_STATUS:-}" ]; then
        echo "error: the evidence store is unreadable" >&2
        exit "$FAKE_ALLOWED_STATUS"
    fi
    printf '%s\\n' "${FAKE_ALLOWED_OUTPUT:-}"
    ;;
"slots calibrate") exit "${FAKE_CALIBRATE_STATUS:-0}" ;;
"slots corpus") exit "${FAKE_CORPUS_STATUS:-0}" ;;
*) exit 64 ;;
esac
"""


@dataclass
class Stage:
    """A folder with the stand-ins on PATH and an answer folder, as in the runner pod."""

    root: Path
    bin: Path
    answer: Path

    def env(self, **extra: str) -> dict[str, str]:
        path = os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), "/usr/bin:/bin"])
        return {"PATH": path, "FAKE_DIR": str(self.root), "NODE_NAME": "model-node-a", **extra}

    def run(self, script: str, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["/bin/sh", str(CHART_SCRIPTS / script), *args],
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def calls(self, tool: str) -> list[list[str]]:
        log = self.root / f"{tool}.log"
        if not log.exists():
            return []
        return [line.split("|") for line in log.read_text(encoding="utf-8").splitlines()]

    def answer_slots(self) -> str:
        return (self.answer / "num_parallel").read_text(encoding="utf-8").strip()

    def answer_reason(self) -> str:
        return (self.answer / "reason").read_text(encoding="utf-8").strip()


@pytest.fixture
def stage(tmp_path: Path) -> Stage:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("ollama", FAKE_OLLAMA), ("vibey-gh", FAKE_VIBEY_GH)):
        tool = bin_dir / name
        tool.write_text(text, encoding="utf-8")
        tool.chmod(0o755)
    answer = tmp_path / "answer"
    answer.mkdir()
    return Stage(tmp_path, bin_dir, answer)


def allowed_json(allowed: object, reason: str = "measured: 3 slots qualify") -> str:
    return json.dumps(
        {
            "allowed": allowed,
            "reason": reason,
            "fingerprint": "f99b07f610204948",
            "evidence": "/var/lib/vibey-gh/slots/evidence/f99b07f610204948.json",
            "requested": False,
            "declaration": "measured",
        }
    )


def start_check(stage: Stage, **extra: str) -> subprocess.CompletedProcess[str]:
    settings = {
        "VIBEY_GH_ANSWER_DIR": str(stage.answer),
        "VIBEY_GH_STARTUP_PORT": "11436",
        "VIBEY_GH_STARTUP_WAIT_SECONDS": "5",
        "VIBEY_GH_MODEL": "gpt-oss:20b",
        "VIBEY_GH_PULL_MODEL": "true",
        "VIBEY_GH_CONFIG": "/etc/vibey-gh/vibey-gh-startup.toml",
        "FAKE_LIST_NEEDS_SERVER": "1",
        **extra,
    }
    return stage.run("allowed-at-start.sh", **settings)


def assert_server_stopped(stage: Stage) -> None:
    pid = int((stage.root / "serve.pid").read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize("script", sorted(p.name for p in CHART_SCRIPTS.glob("*.sh")))
def test_script_is_valid_posix_shell(script: str) -> None:
    result = subprocess.run(
        ["/bin/sh", "-n", str(CHART_SCRIPTS / script)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_start_check_writes_the_measured_answer(stage: Stage) -> None:
    result = start_check(stage, FAKE_ALLOWED_OUTPUT=allowed_json(3))
    assert result.returncode == 0, result.stderr
    assert stage.answer_slots() == "3"
    assert stage.answer_reason() == "measured: 3 slots qualify"
    assert "model-node-a starts its runner with 3 slot(s)" in result.stderr
    assert json.loads((stage.answer / "allowed.json").read_text())["allowed"] == 3
    (serve,) = [call for call in stage.calls("ollama") if call[0] == "serve"]
    # a private server on loopback that prunes nothing on the shared store
    assert (serve[2], serve[3]) == ("127.0.0.1:11436", "1")
    (pull,) = [call for call in stage.calls("ollama") if call[0] == "pull"]
    assert pull[1:3] == ["pull gpt-oss:20b", "127.0.0.1:11436"]
    assert stage.calls("vibey-gh") == [
        ["slots allowed --json", "/etc/vibey-gh/vibey-gh-startup.toml"]
    ]
    assert_server_stopped(stage)


def test_start_check_pulls_nothing_when_told_not_to(stage: Stage) -> None:
    result = start_check(stage, FAKE_ALLOWED_OUTPUT=allowed_json(1), VIBEY_GH_PULL_MODEL="false")
    assert result.returncode == 0, result.stderr
    assert "pull" not in [call[0] for call in stage.calls("ollama")]
    assert stage.answer_slots() == "1"


def test_unmeasured_node_runs_one_slot(stage: Stage) -> None:
    reason = "unmeasured: no evidence for fingerprint 0123456789abcdef; calibration requested"
    result = start_check(stage, FAKE_ALLOWED_OUTPUT=allowed_json(1, reason))
    assert result.returncode == 0, result.stderr
    assert (stage.answer_slots(), stage.answer_reason()) == ("1", reason)


@pytest.mark.parametrize(
    "output",
    [
        allowed_json(0),
        allowed_json(True),
        allowed_json("2"),
        allowed_json(None),
        "[]",
        "not json at all",
        "",
    ],
)
def test_an_unreadable_answer_means_one_slot(stage: Stage, output: str) -> None:
    result = start_check(stage, FAKE_ALLOWED_OUTPUT=output)
    assert result.returncode == 0, result.stderr
    assert stage.answer_slots() == "1"
    assert "could not be read" in stage.answer_reason()


def test_a_failing_allowed_means_one_slot_said_out_loud(stage: Stage) -> None:
    result = start_check(stage, FAKE_ALLOWED_STATUS="2")
    assert result.returncode == 0
    assert stage.answer_slots() == "1"
    assert "error: the evidence store is unreadable" in result.stderr
    assert "vibey-gh slots allowed failed" in stage.answer_reason()
    assert_server_stopped(stage)


def test_a_start_up_server_that_never_answers_means_one_slot(stage: Stage) -> None:
    # one retry a second later is enough to show the wait gives up: the length is not the claim
    result = start_check(stage, FAKE_LIST_FAILS="1", VIBEY_GH_STARTUP_WAIT_SECONDS="1")
    assert result.returncode == 0
    assert stage.answer_slots() == "1"
    assert "did not answer" in stage.answer_reason()
    # nobody was asked: no pull, no `allowed`
    assert stage.calls("vibey-gh") == []
    assert "pull" not in [call[0] for call in stage.calls("ollama")]
    assert_server_stopped(stage)


def test_an_unwritable_answer_folder_fails_the_start_check(stage: Stage) -> None:
    blocker = stage.root / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    result = start_check(
        stage, FAKE_ALLOWED_OUTPUT=allowed_json(2), VIBEY_GH_ANSWER_DIR=str(blocker / "answer")
    )
    assert result.returncode == 1
    assert "cannot write the answer" in result.stderr


def run_runner(stage: Stage, answer: str | None) -> subprocess.CompletedProcess[str]:
    if answer is not None:
        (stage.answer / "num_parallel").write_text(answer, encoding="utf-8")
    return stage.run(
        "start-runner.sh",
        VIBEY_GH_ANSWER_DIR=str(stage.answer),
        OLLAMA_CONTEXT_LENGTH="65536",
        FAKE_SERVE_RETURNS="1",
    )


def test_runner_serves_with_the_answered_slots(stage: Stage) -> None:
    result = run_runner(stage, "3\n")
    assert result.returncode == 0, result.stderr
    ((command, _, _, _, parallel),) = stage.calls("ollama")
    assert (command, parallel) == ("serve", "3")
    assert (stage.root / "serve.env").read_text().strip() == "OLLAMA_CONTEXT_LENGTH=65536"


@pytest.mark.parametrize("answer", [None, "", "0", "-2", "two", "03", "2 slots"])
def test_runner_without_a_usable_answer_serves_one_slot(stage: Stage, answer: str | None) -> None:
    result = run_runner(stage, answer)
    assert result.returncode == 0, result.stderr
    ((command, _, _, _, parallel),) = stage.calls("ollama")
    assert (command, parallel) == ("serve", "1")
    assert "one slot" in result.stderr


CALIBRATE_ARGS = ["--if-requested", "--runner", "ollama", "--window", "65536", "--out", "/x/n"]
PRODUCTION = "http://release-vibey-gh-runner.models.svc:11434"


def calibrate_node(
    stage: Stage, corpus_exists: bool = True, **extra: str
) -> subprocess.CompletedProcess[str]:
    state = stage.root / "state"
    state.mkdir(exist_ok=True)
    corpus = state / "corpus-65536.json"
    if corpus_exists:
        corpus.write_text("{}", encoding="utf-8")
    settings = {
        "VIBEY_GH_PRODUCTION_URL": PRODUCTION,
        "VIBEY_GH_WAIT_INTERVAL_SECONDS": "1",
        "VIBEY_GH_SLOTS_DIR": str(state),
        "VIBEY_GH_CORPUS": str(corpus),
        "VIBEY_GH_WINDOW": "65536",
        "FAKE_ALLOWED_OUTPUT": "1 run allowed: unmeasured",
        **extra,
    }
    return stage.run("calibrate-node.sh", *CALIBRATE_ARGS, **settings)


@pytest.mark.parametrize("status", ["0", "1", "2"])
def test_calibration_passes_its_arguments_and_returns_the_sweep_status(
    stage: Stage, status: str
) -> None:
    result = calibrate_node(stage, FAKE_CALIBRATE_STATUS=status)
    assert result.returncode == int(status), result.stderr
    called = [call[0] for call in stage.calls("vibey-gh")]
    corpus = stage.root / "state" / "corpus-65536.json"
    # what `allowed` said before and after, around the sweep with the Job's own arguments
    assert called == [
        "slots allowed",
        f"slots calibrate --corpus {corpus} {' '.join(CALIBRATE_ARGS)}",
        "slots allowed",
    ]
    ((command, _, host, _, _),) = stage.calls("ollama")
    assert (command, host) == ("list", PRODUCTION)


def test_a_missing_corpus_is_built_from_the_workers_lane_records(stage: Stage) -> None:
    result = calibrate_node(stage, corpus_exists=False)
    assert result.returncode == 0, result.stderr
    state = stage.root / "state"
    called = [call[0] for call in stage.calls("vibey-gh")]
    assert called[0] == (
        f"slots corpus --from-lanes {state}/lanes --window 65536 --out {state}/corpus-65536.json"
    )
    assert called[2].startswith(f"slots calibrate --corpus {state}/corpus-65536.json ")


def test_no_corpus_and_no_lane_records_fails_before_calibrating(stage: Stage) -> None:
    result = calibrate_node(stage, corpus_exists=False, FAKE_CORPUS_STATUS="2")
    assert result.returncode == 1
    assert "no corpus: put one at" in result.stderr
    assert [call[0].split()[1] for call in stage.calls("vibey-gh")] == ["corpus"]


def test_calibration_gives_up_when_the_node_runner_never_answers(stage: Stage) -> None:
    result = calibrate_node(stage, FAKE_LIST_FAILS="1", VIBEY_GH_WAIT_FOR_RUNNER_SECONDS="1")
    assert result.returncode == 1
    assert "did not answer within 1s" in result.stderr
    assert stage.calls("vibey-gh") == []
    assert len(stage.calls("ollama")) >= 2

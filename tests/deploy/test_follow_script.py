"""files/follow-answer.sh, run by the real /bin/sh: pods follow new answers, never mid-request.

`vibey-gh` is the stand-in from test_chart_scripts (it prints $FAKE_ALLOWED_OUTPUT); the runner
is a real process; open connections come from a /proc/net/tcp in the kernel's own format; the
API server is a local stand-in that refuses what the real one refuses (no token: 401, a patch
that is not a merge patch: 415).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from deploy_support import CHART_SCRIPTS
from test_chart_scripts import FAKE_OLLAMA, FAKE_VIBEY_GH, Stage

TCP_HEADER = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n"
)
# 127.0.0.1:11434 (2CAA) listening, and one client connected to it (state 01, ESTABLISHED)
LISTENING = (
    "   0: 00000000:2CAA 00000000:0000 0A 00000000:00000000 00:00000000 00000000 10001"
    "        0 40141 1 0000000000000000 100 0 0 10 0\n"
)
CLIENT = (
    "   1: 0100007F:2CAA 0100007F:D2F4 01 00000000:00000000 00:00000000 00000000 10001"
    "        0 40277 1 0000000000000000 20 4 30 10 -1\n"
)
# an open connection on another port: not the runner's
OTHER = (
    "   2: 0100007F:1F90 0100007F:D2F6 01 00000000:00000000 00:00000000 00000000 10001"
    "        0 40278 1 0000000000000000 20 4 30 10 -1\n"
)


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("ollama", FAKE_OLLAMA), ("vibey-gh", FAKE_VIBEY_GH)):
        tool = bin_dir / name
        tool.write_text(text, encoding="utf-8")
        tool.chmod(0o755)
    answer = tmp_path / "answer"
    answer.mkdir()
    (tmp_path / "net").mkdir()
    yield Stage(tmp_path, bin_dir, answer)


@pytest.fixture
def runner(stage: Stage) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def answer(allowed: int, code: str, reason: str = "measured: 3 slots qualify") -> str:
    return json.dumps({"allowed": allowed, "reason": reason, "reason_code": code})


def follow(
    stage: Stage,
    runner: subprocess.Popen[bytes],
    output: str,
    connections: str = "",
    **extra: str,
) -> Any:
    (stage.root / "net" / "tcp").write_text(TCP_HEADER + LISTENING + connections)
    settings = {
        "VIBEY_GH_ANSWER_DIR": str(stage.answer),
        "VIBEY_GH_RUNNER_PID": str(runner.pid),
        "VIBEY_GH_PROC_NET": str(stage.root / "net"),
        "VIBEY_GH_FOLLOW_PASSES": "1",
        "VIBEY_GH_FOLLOW_SECONDS": "0",
        "VIBEY_GH_IDLE_WAIT_SECONDS": "0",
        "FAKE_ALLOWED_OUTPUT": output,
        **extra,
    }
    return stage.run("follow-answer.sh", **settings)


def serving(stage: Stage, slots: str) -> None:
    (stage.answer / "num_parallel").write_text(f"{slots}\n")


def test_a_new_answer_restarts_the_idle_runner_with_it(
    stage: Stage, runner: subprocess.Popen[bytes]
) -> None:
    serving(stage, "1")
    result = follow(stage, runner, answer(3, "measured"), OTHER)
    assert result.returncode == 0, result.stderr
    assert runner.wait(timeout=10) == -15  # SIGTERM: the kubelet starts the runner again
    assert stage.answer_slots() == "3"
    assert stage.answer_reason() == "measured: 3 slots qualify"
    assert "allowed now answers 3 (was 1)" in result.stderr
    assert [call[0] for call in stage.calls("vibey-gh")] == ["slots allowed --json"]


def test_a_runner_serving_a_request_is_left_alone(
    stage: Stage, runner: subprocess.Popen[bytes]
) -> None:
    serving(stage, "1")
    result = follow(stage, runner, answer(3, "measured"), CLIENT)
    assert result.returncode == 0, result.stderr
    assert runner.poll() is None
    assert stage.answer_slots() == "1"
    assert "it is busy: next pass" in result.stderr


def test_the_same_answer_changes_nothing(stage: Stage, runner: subprocess.Popen[bytes]) -> None:
    serving(stage, "3")
    result = follow(stage, runner, answer(3, "measured"))
    assert result.returncode == 0 and result.stderr == ""
    assert runner.poll() is None


@pytest.mark.parametrize("code", ["production_unreachable", "config_error"])
def test_an_answer_that_rests_on_a_failure_is_not_followed(
    stage: Stage, runner: subprocess.Popen[bytes], code: str
) -> None:
    serving(stage, "3")
    result = follow(stage, runner, answer(1, code, "production runner: no answer"))
    assert result.returncode == 0
    assert runner.poll() is None and stage.answer_slots() == "3"
    assert "not followed" in result.stderr


def test_unmeasured_after_an_upgrade_is_followed_down_to_one(
    stage: Stage, runner: subprocess.Popen[bytes]
) -> None:
    serving(stage, "3")
    result = follow(stage, runner, answer(1, "unmeasured", "unmeasured: runner 0.34.2 → 0.34.4"))
    assert result.returncode == 0, result.stderr
    assert runner.wait(timeout=10) == -15
    assert stage.answer_slots() == "1"


def test_gauges_go_to_the_textfile(stage: Stage, runner: subprocess.Popen[bytes]) -> None:
    serving(stage, "2")
    target = "/var/lib/vibey-gh/textfile/vibey-gh.prom"
    result = follow(stage, runner, answer(2, "measured"), VIBEY_GH_TEXTFILE=target)
    assert result.returncode == 0, result.stderr
    assert stage.calls("vibey-gh")[0][0] == f"slots allowed --json --textfile {target}"


class FakeApiServer(BaseHTTPRequestHandler):
    """PATCH of one pod, as the API server takes it."""

    patches: list[dict[str, Any]] = []

    def do_PATCH(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Authorization") != "Bearer pod-token":
            return self._reply(401, "Unauthorized")
        if self.headers.get("Content-Type") != "application/merge-patch+json":
            return self._reply(415, "UnsupportedMediaType")
        if self.path != "/api/v1/namespaces/models/pods/release-vibey-gh-runner-x7k2p":
            return self._reply(404, "NotFound")
        self.patches.append(json.loads(body))
        self._reply(200, "Success")

    def _reply(self, code: int, reason: str) -> None:
        data = json.dumps({"kind": "Status", "reason": reason, "code": code}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.mark.parametrize(("token", "annotated"), [("pod-token", True), ("stale", False)])
def test_the_pod_is_annotated_with_the_answer(
    stage: Stage, runner: subprocess.Popen[bytes], token: str, annotated: bool
) -> None:
    FakeApiServer.patches = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeApiServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    account = stage.root / "account"
    account.mkdir()
    (account / "token").write_text(token + "\n")
    serving(stage, "2")
    try:
        result = follow(
            stage,
            runner,
            answer(2, "measured"),
            VIBEY_GH_ANNOTATE="true",
            VIBEY_GH_KUBE_API=f"http://127.0.0.1:{server.server_port}",
            VIBEY_GH_SERVICE_ACCOUNT_DIR=str(account),
            POD_NAMESPACE="models",
            POD_NAME="release-vibey-gh-runner-x7k2p",
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr
    if annotated:
        assert FakeApiServer.patches == [
            {
                "metadata": {
                    "annotations": {
                        "vibey-gh/slots-allowed": "2",
                        "vibey-gh/reason-code": "measured",
                    }
                }
            }
        ]
    else:
        assert FakeApiServer.patches == []
        assert "HTTP Error 401" in result.stderr and "could not annotate the pod" in result.stderr
    assert runner.poll() is None  # annotating never touches the runner


def test_the_runner_s_start_script_follows_and_restarts_itself(stage: Stage) -> None:
    """start-runner.sh as the container runs it: Ollama with the answer, the follower beside it
    stopping that very process when the answer changes."""
    (stage.root / "net" / "tcp").write_text(TCP_HEADER + LISTENING)
    serving(stage, "1")
    env = stage.env(
        VIBEY_GH_ANSWER_DIR=str(stage.answer),
        VIBEY_GH_FOLLOW_SECONDS="1",
        VIBEY_GH_FOLLOW_PASSES="1",
        VIBEY_GH_IDLE_WAIT_SECONDS="0",
        VIBEY_GH_PROC_NET=str(stage.root / "net"),
        FAKE_ALLOWED_OUTPUT=answer(2, "measured"),
    )
    container = subprocess.Popen(
        ["/bin/sh", str(CHART_SCRIPTS / "start-runner.sh")],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        status = container.wait(timeout=30)  # the fake `ollama serve` would sleep 20 s
        stderr = container.stderr.read() if container.stderr else ""
    finally:
        container.kill()
    assert status == -15, stderr
    ((command, _, _, _, parallel),) = stage.calls("ollama")
    assert (command, parallel) == ("serve", "1")
    assert stage.answer_slots() == "2"  # the kubelet's restart serves 2
    assert "following this node's answer every 1s" in stderr
    assert "allowed now answers 2 (was 1)" in stderr

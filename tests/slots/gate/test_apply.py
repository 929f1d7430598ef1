"""`slots apply` as a library: where the number comes from, the plan, performing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput, Refused
from vibey_gh.interfaces.schema import as_json
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.platforms.process.commands import CannedCommandRunner
from vibey_gh.runners.llamacpp.models import default_model_path
from vibey_gh.slots.gate.apply import describe_plan, perform_apply, plan_apply

SYSTEMD_COMMANDS = [("systemctl", "daemon-reload"), ("systemctl", "restart", "ollama")]


@dataclass
class StubAnswer:
    allowed: int
    reason: str
    asked: list[LocalModels] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.allowed} — {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "reason": self.reason}


def answering(answer: StubAnswer) -> Any:
    def decide(config: LocalModels) -> StubAnswer:
        answer.asked.append(config)
        return answer

    return decide


def linux(root: Path, run: CannedCommandRunner | None = None) -> PlatformProbes:
    (root / "run/systemd/system").mkdir(parents=True, exist_ok=True)  # systemd is init
    return PlatformProbes.detect("linux", root, run or CannedCommandRunner())


OLLAMA = LocalModels(runner="ollama", window=32768)


def test_explicit_slots_inside_the_answer_are_used_as_given(tmp_path: Path) -> None:
    answer = StubAnswer(2, "measured: 2 slots qualify")
    plan, _ = plan_apply(OLLAMA, linux(tmp_path), slots=2, decide=answering(answer))
    assert (plan.slots, plan.window) == (2, 32768)
    assert plan.why == "--slots 2, inside what slots allowed answers (2)"
    assert plan.answer == {"allowed": 2, "reason": "measured: 2 slots qualify"}
    assert plan.automatic
    assert answer.asked[0].window == 32768


def test_explicit_slots_above_the_answer_are_refused_unless_forced(tmp_path: Path) -> None:
    answer = StubAnswer(1, "declared 1 (concurrent_runs = 1)")
    with pytest.raises(Refused, match="--slots 3 is more than `slots allowed` answers: 1"):
        plan_apply(OLLAMA, linux(tmp_path), slots=3, decide=answering(answer))
    plan, _ = plan_apply(OLLAMA, linux(tmp_path), slots=3, decide=answering(answer), force=True)
    assert (plan.slots, plan.why, plan.answer) == (3, "--slots 3, forced", None)
    one, _ = plan_apply(OLLAMA, linux(tmp_path), slots=1)  # one is always inside
    assert one.why == "--slots 1"


def test_without_slots_the_allowed_answer_decides(tmp_path: Path) -> None:
    answer = StubAnswer(3, "measured: 3 slots qualify")
    plan, _ = plan_apply(OLLAMA, linux(tmp_path), window=65536, decide=answering(answer))
    assert plan.slots == 3
    assert plan.why == "slots allowed: 3 — measured: 3 slots qualify"
    assert plan.answer == {"allowed": 3, "reason": "measured: 3 slots qualify"}
    # the answer is asked for the window being applied, since evidence is keyed to it
    assert answer.asked[0].window == 65536
    assert plan.window == 65536
    assert 'Environment="OLLAMA_NUM_PARALLEL=3"' in (plan.actions[0].content or "")


def test_without_slots_or_a_way_to_ask_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput):
        plan_apply(OLLAMA, linux(tmp_path))


@pytest.mark.parametrize(("slots", "window"), [(0, None), (257, None), (2, 255), (2, 1 << 25)])
def test_out_of_range_numbers_are_bad_input(tmp_path: Path, slots: int, window: int | None) -> None:
    with pytest.raises(BadInput):
        plan_apply(OLLAMA, linux(tmp_path), slots=slots, window=window)


def test_plan_text_shows_every_command_and_the_exact_file(tmp_path: Path) -> None:
    plan, _ = plan_apply(OLLAMA, linux(tmp_path), slots=2, force=True)
    text = describe_plan(plan)
    drop_in = tmp_path / "etc/systemd/system/ollama.service.d/vibey-gh-slots.conf"
    assert text[0] == "ollama on linux: 2 slot(s) of 32768 tokens (--slots 2, forced)"
    assert f"     file {drop_in}:" in text
    content_lines = [f"       {line}" for line in (plan.actions[0].content or "").splitlines()]
    start = text.index(f"     file {drop_in}:") + 1
    assert text[start : start + len(content_lines)] == content_lines
    assert "     $ systemctl daemon-reload" in text
    assert "     $ systemctl restart ollama" in text


def test_dry_plan_changes_nothing_and_perform_does_it(tmp_path: Path) -> None:
    run = CannedCommandRunner({argv: (0, "") for argv in SYSTEMD_COMMANDS})
    plan, parallelism = plan_apply(OLLAMA, linux(tmp_path, run), slots=2, force=True)
    drop_in = tmp_path / "etc/systemd/system/ollama.service.d/vibey-gh-slots.conf"
    assert not drop_in.exists() and run.calls == []
    done = perform_apply(plan, parallelism)
    assert [a.description for a in done] == [a.description for a in plan.actions]
    assert drop_in.read_text() == plan.actions[0].content
    assert run.calls == SYSTEMD_COMMANDS


def test_embedded_runner_gets_a_note_and_nothing_is_performed(tmp_path: Path) -> None:
    run = CannedCommandRunner()
    config = LocalModels(runner="embedded", window=4096, production_url="http://127.0.0.1:9000")
    plan, parallelism = plan_apply(config, linux(tmp_path, run), slots=2, force=True)
    assert not plan.automatic
    assert perform_apply(plan, parallelism) == []
    assert run.calls == []
    (action,) = plan.actions
    assert "--slots 2 --window 4096 --port 9000" in action.description


def test_llama_server_note_names_the_resolved_model(tmp_path: Path) -> None:
    config = LocalModels(runner="llama-server", window=2048)
    plan, _ = plan_apply(config, linux(tmp_path), slots=2, force=True)
    assert f"-m {default_model_path()} -np 2 -c 4096" in plan.actions[0].description


def test_json_form(tmp_path: Path) -> None:
    plan, _ = plan_apply(OLLAMA, linux(tmp_path), slots=2, force=True)
    dry = as_json(plan.answer_of(None))
    assert dry["dry_run"] is True and dry["performed"] == []
    assert [a["argv"] for a in dry["actions"]] == [None, *map(list, SYSTEMD_COMMANDS)]
    assert dry["actions"][0]["path"].endswith("vibey-gh-slots.conf")
    done = as_json(plan.answer_of(list(plan.actions)))
    assert done["dry_run"] is False and len(done["performed"]) == 3

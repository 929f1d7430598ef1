"""Side by side with GuideLLM: the same prompts, runner, window and request settings at N slots.

Both clients replay one prompt set against the embedded llama.cpp runner with N slots of
--window tokens each, N requests at a time, streamed, temperature 0, seed 42, at most
--max-tokens output tokens, each against a runner of its own started the same way, the order
alternating between repeats (ours first in repeat 1, GuideLLM first in repeat 2, …):

  vibey-gh   `vibey-gh slots calibrate --slots N`, one step, as its own process: N
             closed-loop workers, the 1 Hz sampler, the log scanner, evidence and report
  GuideLLM   `guidellm run` with the concurrent profile at N streams, in its own virtual
             environment (bench/peer/setup_guidellm.sh), against a runner started the same way

The prompts are the demo corpus's turns (the shipped specs over the package's sources) with
each turn's conversation folded into one user message: GuideLLM rewrites requests that carry
tool definitions (it drops the output cap and forces a tool call), so neither client sends
tools here. GuideLLM runs offline: its token counts come from the runner's usage fields.

Printed for each run: served requests, the throughput it reports (requests/s, output
tokens/s), and its own CPU time per served request: the whole process, start-up and imports
included (getrusage of the vibey-gh process without its runner; of the guidellm process and its
worker processes). The two clients count requests per second over different spans, so ours is
printed both ways: as the calibration decides (its steady-state window, every worker busy,
cycling the corpus until the step's clock and one pass are done) and as GuideLLM counts (served
requests over the span from the first send to the last answer), with the share of prompt
tokens the runner took from its prompt cache. The last lines give the median over the repeats
of each, and of ours ÷ GuideLLM per repeat.

    bash bench/peer/setup_guidellm.sh
    python bench/peer/side_by_side.py [--slots 2] [--max-tokens 64] [--window 4096] [--repeats 6]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_support import CpuClock, free_port

from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus, build_demo_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.state import StateLayout

DEFAULT_VENV = Path.home() / ".cache" / "vibey-gh-bench" / "guidellm-venv"
ALL_OF_THEM = 1000  # segments per stratum: take every prompt the pool offers


def folded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system message, then everything after it as one user message."""
    parts = []
    for message in messages[1:]:
        text = message.get("content") or ""
        if message.get("tool_calls"):
            text += " " + json.dumps([call["function"] for call in message["tool_calls"]])
        parts.append(f"[{message['role']}] {text}")
    return [messages[0], {"role": "user", "content": "\n\n".join(parts)}]


def plain_prompts(folder: Path, window: int) -> Corpus:
    """The demo corpus's turns as plain chats, drawn again as a corpus of one-turn segments."""
    demo = build_demo_corpus(window=window)
    transcripts = folder / "prompts.jsonl"
    with transcripts.open("w") as handle:
        for turn in demo.turns():
            chat = [*folded(turn.messages), {"role": "assistant", "content": "(answer)"}]
            handle.write(json.dumps({"id": turn.id, "messages": chat}) + "\n")
    pool = build_pool(PoolSources(from_transcripts=[transcripts]))
    return build_corpus(pool, window=window, segments_per_stratum=ALL_OF_THEM, segment_turns=1)


# Runs the CLI and leaves the process's own CPU seconds (not its runner's) in a file at exit.
OWN_CPU_WRAPPER = """
import atexit, resource, runpy, sys
out = sys.argv.pop(1)
def note():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    open(out, "w").write(str(usage.ru_utime + usage.ru_stime))
atexit.register(note)
sys.argv[0] = "vibey-gh"
runpy.run_module("vibey_gh.cli.main", run_name="__main__")
"""


def _log_seconds(stamp: str) -> float | None:
    """llama.cpp's log stamp, minutes.seconds.milliseconds.microseconds since it started."""
    parts = stamp.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    minutes, seconds, millis, micros = (int(p) for p in parts)
    return minutes * 60 + seconds + millis / 1e3 + micros / 1e6


def first_pass_by_the_runner(log_text: str, count: int) -> dict[str, float]:
    """What the runner's own log says of the first `count` requests: requests per second from
    the first prompt taken to the `count`-th request released, and the share of their prompt
    tokens that came from its prompt cache. The same reading for both clients, so neither
    client's own clock nor how far past one pass it went enters the comparison."""
    starts: list[float] = []
    ends: list[float] = []
    prompt: dict[str, int] = {}
    taken: list[tuple[int, int]] = []
    for line in log_text.splitlines():
        when = _log_seconds(line.split(" ", 1)[0])
        task = re.search(r"\| task (\d+) \|", line)
        if when is None or task is None:
            continue
        if (found := re.search(r"new prompt,.*task\.n_tokens = (\d+)", line)) is not None:
            starts.append(when)
            prompt[task.group(1)] = int(found.group(1))
        elif (found := re.search(r"cached n_tokens = (\d+)", line)) is not None:
            if task.group(1) in prompt:
                taken.append((prompt.pop(task.group(1)), int(found.group(1))))
        elif "stop processing" in line:
            ends.append(when)
    if len(ends) < count or not starts:
        return {"first_pass_requests_per_s": float("nan"), "first_pass_cached": float("nan")}
    first = taken[:count]
    total = sum(tokens for tokens, _ in first)
    return {
        "first_pass_requests_per_s": count / (ends[count - 1] - starts[0]),
        "first_pass_cached": sum(c for _, c in first) / total if total else float("nan"),
    }


def run_ours(corpus: Corpus, config: LocalModels, slots: int, max_tokens: int) -> dict[str, Any]:
    """`vibey-gh slots calibrate --slots N` as its own process, like a user runs it."""
    with tempfile.TemporaryDirectory(prefix="side-ours-") as temp:
        folder = Path(temp)
        corpus_path = folder / "corpus.json"
        write_corpus(corpus, corpus_path)
        (folder / "vibey-gh.toml").write_text(
            "[local_models]\n"
            'runner = "embedded"\n'
            f"window = {config.window}\n"
            f"calibration_port = {config.calibration_port}\n"
            f'production_url = "{config.production}"\n'
        )
        own = folder / "own-cpu.txt"
        argv = [sys.executable, "-c", OWN_CPU_WRAPPER, str(own), "slots", "calibrate"]
        argv += ["--corpus", str(corpus_path), "--window", str(config.window)]
        argv += ["--slots", str(slots), "--max-tokens", str(max_tokens)]
        state = folder / "state"
        env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)}
        start = CpuClock.now()
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
        cpu = CpuClock.now().since(start)
        if done.returncode != 0:
            raise SystemExit(f"vibey-gh failed ({done.returncode}):\n{done.stderr[-2000:]}")
        own_cpu = float(own.read_text())
        (evidence,) = StateLayout(state).evidence.glob("*.json")
        (log,) = StateLayout(state).root.glob("runs/*/step-*/runner.log")
        by_runner = first_pass_by_the_runner(log.read_text(errors="replace"), corpus.turn_count)
        (step,) = load_evidence(evidence).steps
    metrics = step_metrics(step)
    served = [t.result for t in step.turns if t.result.served]
    span = max(r.ended for r in served) - min(r.started for r in served) if served else 0.0
    prompt = sum(r.prompt_tokens or 0 for r in served)
    cached = sum(r.cached_tokens or 0 for r in served)
    return {
        "served": metrics.served,
        "total": metrics.total,
        "requests_per_s": metrics.turns_per_hour / 3600,
        "span_requests_per_s": len(served) / span if span > 0 else float("nan"),
        "cached_share": cached / prompt if prompt else float("nan"),
        **by_runner,
        "output_tokens_per_s": metrics.output_tokens_per_s,
        "own_cpu_s": own_cpu,
        "runner_cpu_s": cpu.children - own_cpu,
    }


def scenario(target: str, data: Path, report: Path, slots: int, max_tokens: int, count: int) -> Any:
    return {
        "spec": {
            "backend": {
                "kind": "openai_http",
                "target": target,
                "model": "default",
                "request_format": "/v1/chat/completions",
                "stream": True,
                "http2": False,
                "timeout": 600,
                "max_tokens": max_tokens,
                "extras": {"body": {"temperature": 0.0, "seed": 42}},
            },
            "profile": {"kind": "concurrent", "streams": slots},
            "data": [{"kind": "json_file", "path": str(data)}],
            "constraints": [{"kind": "max_requests", "count": count}],
            "outputs": [{"kind": "json", "path": str(report)}],
        }
    }


def run_guidellm(
    corpus: Corpus, venv: Path, window: int, slots: int, max_tokens: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="side-guidellm-") as temp:
        folder = Path(temp)
        data = folder / "prompts.jsonl"
        data.write_text(
            "".join(json.dumps({"messages": t.messages}) + "\n" for t in corpus.turns())
        )
        port = free_port()
        report = folder / "report.json"
        spec = scenario(
            f"http://127.0.0.1:{port}", data, report, slots, max_tokens, corpus.turn_count
        )
        (folder / "scenario.json").write_text(json.dumps(spec))
        runner = runner_for("embedded").start(
            RunnerLaunch(slots, window, port, "default", folder / "runner.log")
        )
        try:
            runner.wait_ready()
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
            argv = [str(venv / "bin" / "guidellm"), "run", "-c", str(folder / "scenario.json")]
            start, wall = CpuClock.now(), time.monotonic()
            done = subprocess.run(
                [*argv, "--disable-progress"], env=env, capture_output=True, text=True
            )
            cpu, wall = CpuClock.now().since(start), time.monotonic() - wall
        finally:
            runner.stop()
        if done.returncode != 0 or not report.exists():
            raise SystemExit(f"guidellm failed ({done.returncode}):\n{done.stderr[-2000:]}")
        benchmark = json.loads(report.read_text())["benchmarks"][0]
        log_text = (folder / "runner.log").read_text(errors="replace")
        by_runner = first_pass_by_the_runner(log_text, corpus.turn_count)
    metrics = benchmark["metrics"]
    totals = metrics["request_totals"]
    rate = metrics["requests_per_second"]["successful"]["mean"]
    return {
        "served": totals["successful"],
        "total": totals["total"],
        "requests_per_s": rate,
        "span_requests_per_s": rate,
        "cached_share": by_runner["first_pass_cached"],
        **by_runner,
        "output_tokens_per_s": metrics["output_tokens_per_second"]["successful"]["mean"],
        "own_cpu_s": cpu.children,
        "wall_s": wall,
        "duration_s": benchmark["duration"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument("--peer-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each, order alternated")
    args = parser.parse_args()
    if not (args.peer_venv / "bin" / "guidellm").exists():
        print(f"no guidellm in {args.peer_venv}: run bench/peer/setup_guidellm.sh", file=sys.stderr)
        return 2
    version = subprocess.run(
        [str(args.peer_venv / "bin" / "guidellm"), "--version"], capture_output=True, text=True
    ).stdout.strip()

    with tempfile.TemporaryDirectory(prefix="side-") as temp:
        corpus = plain_prompts(Path(temp), args.window)
    config = LocalModels(
        runner="embedded",
        window=args.window,
        calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{free_port()}",
    )
    print(
        f"{corpus.turn_count} prompts (deepest ~{corpus.max_depth_estimate} tokens by estimate), "
        f"N={args.slots}, window {args.window}, {args.max_tokens} output tokens, {version}",
        flush=True,
    )
    print(
        f"{'repeat':<8}{'client':<10}{'served':>10}{'req/s':>9}{'span req/s':>12}"
        f"{'1st pass':>10}{'out tok/s':>11}{'cached':>8}{'own CPU s':>11}{'ms/request':>12}",
        flush=True,
    )
    rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for repeat in range(args.repeats):
        first_ours = repeat % 2 == 0
        result: dict[str, dict[str, Any]] = {}
        for name in ("vibey-gh", "GuideLLM") if first_ours else ("GuideLLM", "vibey-gh"):
            if name == "vibey-gh":
                result[name] = run_ours(corpus, config, args.slots, args.max_tokens)
            else:
                result[name] = run_guidellm(
                    corpus, args.peer_venv, args.window, args.slots, args.max_tokens
                )
            print_row(repeat + 1, name, result[name])
        rows.append((result["vibey-gh"], result["GuideLLM"]))
    if args.repeats > 1:
        print_medians(rows)
    return 0


def print_row(repeat: int, name: str, row: dict[str, Any]) -> None:
    per = row["own_cpu_s"] / row["served"] * 1000 if row["served"] else float("nan")
    extra = f"  (runner CPU {row['runner_cpu_s']:.1f} s)" if "runner_cpu_s" in row else ""
    print(
        f"{repeat:<8}{name:<10}{row['served']:>6}/{row['total']:<3}{row['requests_per_s']:>9.3f}"
        f"{row['span_requests_per_s']:>12.3f}{row['first_pass_requests_per_s']:>10.3f}"
        f"{row['output_tokens_per_s']:>11.2f}"
        f"{row['cached_share']:>8.0%}{row['own_cpu_s']:>11.2f}{per:>12.1f}{extra}",
        flush=True,
    )


def print_medians(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    def median(values: list[float]) -> str:
        return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"

    print()
    print(f"over {len(rows)} repeats, median (range):")
    lines = (
        ("vibey-gh req/s, as the calibration decides", [o["requests_per_s"] for o, _ in rows]),
        ("vibey-gh req/s, first send to last answer", [o["span_requests_per_s"] for o, _ in rows]),
        (
            "vibey-gh req/s, first pass by the runner",
            [o["first_pass_requests_per_s"] for o, _ in rows],
        ),
        ("GuideLLM req/s", [p["requests_per_s"] for _, p in rows]),
        (
            "GuideLLM req/s, first pass by the runner",
            [p["first_pass_requests_per_s"] for _, p in rows],
        ),
    )
    for label, values in lines:
        print(f"  {label + ':':<44}{median(values)}")
    steady = [o["requests_per_s"] / p["requests_per_s"] for o, p in rows]
    span = [o["span_requests_per_s"] / p["requests_per_s"] for o, p in rows]
    print(f"  {'ours ÷ GuideLLM, as decided:':<44}{median(steady)}")
    first = [o["first_pass_requests_per_s"] / p["first_pass_requests_per_s"] for o, p in rows]
    print(f"  {'ours ÷ GuideLLM, same span:':<44}{median(span)}")
    print(f"  {'ours ÷ GuideLLM, first pass by the runner:':<44}{median(first)}")


if __name__ == "__main__":
    sys.exit(main())

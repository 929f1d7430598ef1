"""TTFT, ITL and p95 latency side by side with GuideLLM, against one server, at fixed concurrency.

One runner is started (the embedded llama.cpp runner, or a llama-server given with --binary)
with as many slots as the largest concurrency, on 127.0.0.1 and a free port, and warmed up
with one pass over every prompt (so each measured pass finds the same prompt cache).
Then, for each concurrency N and each repeat, both clients replay the same prompts against it,
streamed, temperature 0, seed 42, at most --max-tokens output tokens, N requests at a time, the
order alternating between repeats (ours first, then GuideLLM first, …):

  vibey-gh   the calibration's own streamed replay (`replay_corpus` with N workers, closed
             loop: a worker sends its next prompt when the last one is answered), its figures
             from `latency_figures` (TTFT to the first chunk with text, ITL the mean gap
             between later tokens, latency p50 and p95 over every served request)
  GuideLLM   `guidellm run` with the concurrent profile at N streams, streamed, in its own
             virtual environment (bench/peer/setup_guidellm.sh); its figures from its JSON
             report (successful requests: median and p95 of TTFT, ITL and request latency)

The prompts are the demo corpus's turns folded into plain chats (see side_by_side.py: GuideLLM
rewrites requests that carry tools). Printed: one row per client, N and repeat with requests
per second, TTFT p50/p95, ITL p50/p95 and latency p50/p95 in milliseconds, then the medians
per client and N over the repeats.

    bash bench/peer/setup_guidellm.sh      # or: python -m venv DIR && DIR/bin/pip install guidellm
    python bench/peer/latency_side_by_side.py [--concurrency 1 2] [--repeats 1]
        [--max-tokens 64] [--window 4096] [--prompts K] [--peer-venv DIR]
        [--binary PATH/llama-server]

Without GuideLLM in --peer-venv it prints our figures alone and says that GuideLLM was skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_support import free_port
from side_by_side import DEFAULT_VENV, plain_prompts

from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.corpus.corpus import Corpus
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.measurement.stepping.replay import replay_corpus

FIGURES = ("req/s", "TTFT p50", "TTFT p95", "ITL p50", "ITL p95", "lat p50", "lat p95")


def _ms(value: float | None) -> float:
    return float("nan") if value is None else value * 1000.0


def run_ours(running: RunningRunner, corpus: Corpus, n: int, max_tokens: int) -> dict[str, Any]:
    settings = ChatSettings(window=corpus.window, max_tokens=max_tokens, stream=True)
    outcome = replay_corpus(running, corpus.segments, n, settings, check=lambda _turns: None)
    results = [t.result for t in outcome.turns]
    figures = latency_figures(results, None)
    served = [r for r in results if r.served]
    span = max(r.ended for r in served) - min(r.started for r in served) if served else 0.0
    return {
        "served": len(served),
        "total": len(results),
        "req/s": len(served) / span if span > 0 else float("nan"),
        "TTFT p50": _ms(figures.ttft_p50_s),
        "TTFT p95": _ms(figures.ttft.value() if figures.ttft else None),
        "TPOT p50": _ms(figures.tpot_p50_s),
        "ITL p95": _ms(figures.itl.value() if figures.itl else None),
        "lat p50": _ms(figures.latency_p50_s),
        "lat p95": _ms(figures.latency.value() if figures.latency else None),
        "output_tokens": sum(r.output_tokens or 0 for r in served),
    }


def scenario(target: str, data: Path, report: Path, n: int, max_tokens: int, count: int) -> Any:
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
            "profile": {"kind": "concurrent", "streams": n},
            "data": [{"kind": "json_file", "path": str(data)}],
            "constraints": [{"kind": "max_requests", "count": count}],
            "outputs": [{"kind": "json", "path": str(report)}],
        }
    }


def _distribution(metrics: dict[str, Any], key: str) -> dict[str, Any]:
    found: dict[str, Any] = metrics[key]["successful"]
    return found


def _p95(distribution: dict[str, Any]) -> float:
    return float(distribution["percentiles"]["p95"])


def run_guidellm(
    venv: Path, base_url: str, corpus: Corpus, n: int, max_tokens: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="peer-latency-") as temp:
        folder = Path(temp)
        data = folder / "prompts.jsonl"
        data.write_text(
            "".join(json.dumps({"messages": t.messages}) + "\n" for t in corpus.turns())
        )
        report = folder / "report.json"
        spec = scenario(base_url, data, report, n, max_tokens, corpus.turn_count)
        (folder / "scenario.json").write_text(json.dumps(spec))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        argv = [str(venv / "bin" / "guidellm"), "run", "-c", str(folder / "scenario.json")]
        done = subprocess.run(
            [*argv, "--disable-progress"], env=env, capture_output=True, text=True
        )
        if done.returncode != 0 or not report.exists():
            raise SystemExit(f"guidellm failed ({done.returncode}):\n{done.stderr[-3000:]}")
        benchmark = json.loads(report.read_text())["benchmarks"][0]
    metrics = benchmark["metrics"]
    totals = metrics["request_totals"]
    ttft = _distribution(metrics, "time_to_first_token_ms")
    itl = _distribution(metrics, "inter_token_latency_ms")
    latency = _distribution(metrics, "request_latency")  # seconds
    return {
        "served": totals["successful"],
        "total": totals["total"],
        "req/s": metrics["requests_per_second"]["successful"]["mean"],
        "TTFT p50": float(ttft["median"]),
        "TTFT p95": _p95(ttft),
        "ITL p50": float(itl["median"]),
        "ITL p95": _p95(itl),
        "lat p50": float(latency["median"]) * 1000.0,
        "lat p95": _p95(latency) * 1000.0,
        "output_tokens": None,
    }


def _row(name: str, n: int, repeat: int, figures: dict[str, Any]) -> str:
    served = f"{figures['served']}/{figures['total']}"
    cells = "".join(
        f"{figures[k]:>10.3f}" if k == "req/s" else f"{figures[k]:>10.0f}" for k in FIGURES
    )
    return f"{name:<10}{n:>3}{repeat:>4}{served:>9}{cells}"


def _header() -> str:
    return f"{'client':<10}{'N':>3}{'rep':>4}{'served':>9}" + "".join(f"{k:>10}" for k in FIGURES)


def _warm_up(running: RunningRunner, corpus: Corpus, max_tokens: int) -> None:
    """Every prompt once before anything is measured. The runner keeps prompts it has seen in
    its prompt cache, so without this the client that goes second finds the other's prompts
    cached and shows a far shorter TTFT: after it, every measured pass finds the same cache."""
    settings = ChatSettings(window=corpus.window, max_tokens=max_tokens, stream=True)
    replay_corpus(running, corpus.segments, 1, settings, check=lambda _turns: None)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument("--prompts", type=int, help="replay only this many, the shallowest")
    parser.add_argument("--peer-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--binary", help="a llama-server to run instead of the embedded runner")
    # one thread: on a machine busier than its cores, llama.cpp's threads wait on each other
    parser.add_argument("--threads", type=int, default=1, help="the runner's threads")
    args = parser.parse_args()
    peer = args.peer_venv / "bin" / "guidellm"
    version = None
    if peer.exists():
        version = subprocess.run([str(peer), "--version"], capture_output=True, text=True)
        version = (version.stdout or version.stderr).strip().splitlines()[-1].split()[-1]
    else:
        print(
            f"GuideLLM skipped: no guidellm in {args.peer_venv} "
            "(bash bench/peer/setup_guidellm.sh, or pass --peer-venv); our figures only",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="peer-latency-") as temp:
        folder = Path(temp)
        corpus = plain_prompts(folder, args.window)
        if args.prompts:  # the shallowest: on a busy machine prompt processing dominates
            shallow = sorted(corpus.segments, key=lambda s: s.turns[0].depth_estimate)
            corpus = replace(corpus, segments=shallow[: args.prompts])
        kind = "llama-server" if args.binary else "embedded"
        port = free_port()
        launch = RunnerLaunch(
            max(args.concurrency),
            args.window,
            port,
            "default",
            folder / "runner.log",
            binary=args.binary,
            threads=args.threads,
        )
        depths = [t.depth_estimate for t in corpus.turns()]
        print(
            f"{corpus.turn_count} prompts ({min(depths)}–{max(depths)} tokens by estimate), "
            f"{kind} runner with {max(args.concurrency)} slots of {args.window} tokens, "
            f"{args.max_tokens} output tokens, streamed; "
            f"GuideLLM {version or 'absent'}",
            flush=True,
        )
        running = runner_for(kind).start(launch)
        rows: list[tuple[str, int, dict[str, Any]]] = []
        try:
            running.wait_ready()
            running.preload()
            _warm_up(running, corpus, args.max_tokens)
            print(_header(), flush=True)
            for n in args.concurrency:
                for repeat in range(args.repeats):
                    order = (
                        ["vibey-gh", "GuideLLM"] if repeat % 2 == 0 else ["GuideLLM", "vibey-gh"]
                    )
                    for name in order:
                        if name == "GuideLLM" and version is None:
                            continue
                        started = time.monotonic()
                        if name == "vibey-gh":
                            figures = run_ours(running, corpus, n, args.max_tokens)
                        else:
                            figures = run_guidellm(
                                args.peer_venv, running.base_url, corpus, n, args.max_tokens
                            )
                        figures["wall_s"] = time.monotonic() - started
                        rows.append((name, n, figures))
                        print(_row(name, n, repeat + 1, figures), flush=True)
        finally:
            running.stop()
    print("\nmedians over the repeats:")
    print(f"{'client':<10}{'N':>3}" + "".join(f"{k:>10}" for k in FIGURES))
    for n in args.concurrency:
        for name in ("vibey-gh", "GuideLLM"):
            mine = [f for who, at, f in rows if who == name and at == n]
            if not mine:
                continue
            cells = []
            for key in FIGURES:
                value = statistics.median(f[key] for f in mine)
                cells.append(f"{value:>10.3f}" if key == "req/s" else f"{value:>10.0f}")
            print(f"{name:<10}{n:>3}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A small, fast corpus for sweeps on the embedded and simulated runners (window 1024)."""

from __future__ import annotations

import json
from pathlib import Path

from msgspec.structs import replace

from vibey_gh.files import canonical_json
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.turns import sha256_text

TINY_WINDOW = 1024
# The output cap the tiny corpus leaves room for: its deepest turns nearly fill the window.
TINY_ANSWER_CAP = 64
SOURCE = (
    "def add(a, b):\n    return a + b\n\n"
    "class Counter:\n    def __init__(self):\n        self.n = 0\n"
    "    def tick(self):\n        self.n += 1\n        return self.n\n"
)


def _run(index: int) -> dict[str, object]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You read code and answer briefly."},
        {"role": "user", "content": f"Task {index}: explain what the files do."},
    ]
    for step in range(5):
        call_id = f"call_{index}_{step}"
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"mod{step}.py"}),
                        },
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": SOURCE * (1 + index % 2)}
        )
    messages.append({"role": "assistant", "content": "Done."})
    return {"messages": messages}


def tiny_corpus(folder: Path) -> tuple[Corpus, Path]:
    transcripts = folder / "transcripts.jsonl"
    transcripts.write_text("".join(json.dumps(_run(i)) + "\n" for i in range(6)))
    pool = build_pool(PoolSources(from_transcripts=[transcripts]))
    corpus = build_corpus(
        pool,
        window=TINY_WINDOW,
        segments_per_stratum=1,
        segment_turns=2,
        answer_cap=TINY_ANSWER_CAP,
    )
    path = folder / "corpus.json"
    write_corpus(corpus, path)
    return corpus, path


def shallow_tiny_corpus(folder: Path) -> tuple[Corpus, Path]:
    """The tiny corpus's two shallowest segments (four turns), hashed again as a corpus file
    must be: for a sweep whose test is about something else than the prompts it reads."""
    drawn, path = tiny_corpus(folder)
    unhashed = replace(drawn, segments=drawn.segments[:2], corpus_sha256="")
    corpus = replace(unhashed, corpus_sha256=sha256_text(canonical_json(unhashed.body_json())))
    write_corpus(corpus, path)
    return corpus, path


def embedded_work_dir(folder: Path, extra_config: str = "") -> Path:
    """A working directory whose vibey-gh.toml runs the embedded runner at the tiny window on
    free ports, production down; `extra_config` lines are added under [local_models]."""
    from .ports import free_port

    work = folder / "cwd"
    work.mkdir()
    (work / "vibey-gh.toml").write_text(
        "[local_models]\n"
        + f'runner = "embedded"\nwindow = {TINY_WINDOW}\ncalibration_port = {free_port()}\n'
        + f'production_url = "http://127.0.0.1:{free_port()}"\n'
        + extra_config
    )
    return work


def calibrate_command(corpus_path: Path, max_tokens: int, *extra: str) -> list[str]:
    """`slots calibrate` on the tiny corpus, N = 1, 1, 2, as its own process."""
    import sys

    return [
        sys.executable, "-m", "vibey_gh.cli.main", "slots", "calibrate",
        "--corpus", str(corpus_path), "--window", str(TINY_WINDOW), "--slots", "1,1,2",
        "--max-tokens", str(max_tokens), *extra,
    ]  # fmt: skip

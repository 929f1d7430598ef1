"""`vibey-gh slots corpus`: build a pool, draw a corpus, or show one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ...config import LocalModels, load_config
from ...platforms.storage.system_paths import check_output_file
from ...runners.counting import prompt_counter
from ...slots.corpus.asked import draw_asked, options_asked
from ...slots.corpus.corpus import load_corpus, write_corpus
from ...slots.corpus.enough import too_few_runs
from ...slots.corpus.summary import corpus_summary
from ...slots.report.documents.corpus_profile import summary_lines
from ..common import collaborators, emit_json, json_command, say, window_option
from ..options import PATH, SHAPES, defaulted, inputs_option, max_tokens_option


@click.command()
@inputs_option("--specs", "Lane spec file or folder.")
@click.option("--sample-specs", type=int, help="Use a seeded sample of this many specs.")
@inputs_option("--from-lanes", "Folder of lane events.jsonl.")
@click.option(
    "--from-my-lanes",
    is_flag=True,
    help="The lanes `lane run` and `storm run` recorded in the state folder (as --from-lanes "
    "STATE/lanes, wherever the state folder is on this machine).",
)
@inputs_option("--from-transcripts", "JSON Lines transcripts.")
@inputs_option(
    "--from-chat-logs", "JSON Lines of OpenAI-style `messages` arrays (what agent tools export)."
)
@inputs_option("--from-traces", "Recorded agent trace (kv-cache-tester JSON), or a folder of them.")
@defaulted(
    "--fit",
    kind=click.Choice(["scale", "drop"]),
    default="scale",
    help_text="Traces deeper than --window: scale each run's depths to fit, or drop deeper turns.",
)
@inputs_option(
    "--from-sessions", "Codex CLI rollout or Claude Code session (.jsonl), or a folder of them."
)
@click.option(
    "--fill-window",
    is_flag=True,
    help="Let the deepest spec run read on until its last turn nearly fills --window.",
)
@click.option(
    "--count-with",
    type=click.Choice(["runner", "estimate"]),
    help="How --fill-window counts depth, and how --from-sessions sizes the stand-in for "
    "what a log leaves out: the configured runner's own chat template and tokenizer (its "
    "calibration runner is started for it; the demo's is the embedded one; Ollama has no "
    "tokenizer, so the estimate), or the estimate (characters ÷ 3). Default: the runner for "
    "--fill-window, the estimate for --from-sessions.",
)
@click.option("--demo", is_flag=True, help="The shipped demo specs over the package's sources.")
@window_option("Tokens per slot (default: config).")
@click.option(
    "--shape",
    type=SHAPES,
    help="Whole runs, or segments of consecutive turns. Default: runs from lane records and "
    "transcripts (their own tool time), segments from specs and --demo.",
)
@click.option(
    "--segments-per-stratum",
    type=int,
    help="Segments (or whole runs) per stratum. Default 5 (demo 2).",
)
@click.option("--segment-turns", type=int, help="Default 3 (demo 2); segments only.")
@max_tokens_option(
    "Output cap every turn leaves room for: a turn whose prompt and cap do not fit "
    "--window together is dropped and counted (default: config max_tokens; demo 128)."
)
@defaulted("--seed", kind=int, default=0, help_text="Seed of every draw.")
@click.option("--out", type=PATH, help="Corpus file to write.")
@click.option("--show", type=PATH, help="Summarize a corpus file.")
@json_command
def corpus(
    from_my_lanes: bool,
    from_chat_logs: tuple[Path, ...],
    show: Path | None,
    as_json: bool,
    **flags: Any,
) -> None:
    """Build a storm-shaped pool of turns and draw a stratified corpus for calibrations.

    A pool comes from lane specs (--specs, repeatable: each spec's plan, then one read_file
    turn per file at the spec's commit), from lane records (--from-lanes: the payloads the
    lanes sent) or from transcripts (--from-transcripts, or --from-chat-logs: JSON Lines of
    OpenAI-style `messages` arrays, bare or under "messages"), from recorded agent traces
    (--from-traces: token counts and KV-block ids, replayed as stand-in text that shares
    exactly the prefixes the trace shares; --fit scales or drops what is deeper than the
    window) or from coding-agent session logs (--from-sessions: Codex CLI rollouts under
    ~/.codex/sessions, Claude Code sessions under ~/.claude/projects; one run per session,
    with the tool time between turns, and — where the log records what each request cost —
    a stand-in of that size for the system prompt and tool schemas it leaves out). Every turn
    leaves room for its answer: its prompt plus --max-tokens (or its own smaller cap) fits
    --window, or it is dropped and counted; a run whose first turn cannot fit is left out and
    named. The corpus takes
    --segments-per-stratum segments of --segment-turns consecutive turns in each quarter of
    --window by estimate (characters ÷ 3). With --shape runs it takes whole runs instead,
    every turn in order, each run in the quarter of its deepest turn. --fill-window lets the
    deepest spec run read on until its last turn nearly fills --window by the runner's own
    count (--count-with; that run's depths are then the runner's count, and the corpus says
    which count was used). The same inputs give a byte-identical file.
    An --out path in /proc, /sys or /dev, or one that exists and is not a regular file, is
    refused before anything is built (exit 2). A spec whose repository is a system folder, or
    whose globs would take too long to match, or whose working tree (or commit) holds more
    than 200,000 files and folders or folders more than 64 levels deep, is refused naming the
    spec (exit 2); so is a --specs folder past the same caps, never listed in part.

    \b
    Examples:
      vibey-gh slots corpus --specs lanes/specs --window 65536 --out corpus.json
      vibey-gh slots corpus --specs lanes/specs --sample-specs 40 --seed 0 --out corpus.json
      vibey-gh slots corpus --from-my-lanes --out corpus.json
      vibey-gh slots corpus --from-lanes other-host/lanes --out corpus.json
      vibey-gh slots corpus --specs lanes/specs --shape runs --out runs.json
      vibey-gh slots corpus --from-transcripts chats.jsonl --window 8192 --out corpus.json
      vibey-gh slots corpus --from-chat-logs agent-export.jsonl --out corpus.json
      vibey-gh slots corpus --from-traces traces/ --window 65536 --fit scale --out corpus.json
      vibey-gh slots corpus --from-sessions ~/.codex/sessions --window 32768 --out corpus.json
      vibey-gh slots corpus --demo --out demo-corpus.json
      vibey-gh slots corpus --demo --window 65536 --fill-window --out deep.json
      vibey-gh slots corpus --show corpus.json --json
    """
    flags["from_transcripts"] += from_chat_logs
    if from_my_lanes:
        flags["from_lanes"] += (collaborators().layout().lanes,)
    options = options_asked(show, flags)
    if isinstance(options, Path):
        _render(corpus_summary(load_corpus(options)), options, as_json, written=False)
        return
    # The demo is calibrated on the embedded runner and its shipped model.
    config = LocalModels if options.demo else load_config
    check_output_file(options.out, "--out")
    with prompt_counter(options.counting, config, collaborators().layout(), say) as counter:
        built, notes = draw_asked(options, counter, load_config)
    write_corpus(built, options.out)
    _render(corpus_summary(built), options.out, as_json, written=True)
    for note in notes:  # what the pool's sources skipped or took for unknown, and how many
        say(f"note: {note}")
    warning = too_few_runs(built.segments, built.whole_runs)
    if warning is not None:
        say(f"warning: {warning}")


def _render(summary: dict[str, Any], path: Path, as_json: bool, *, written: bool) -> None:
    if as_json:
        emit_json({**summary, "path": str(path)})
        return
    click.echo("\n".join(summary_lines(summary, f"{'wrote' if written else 'corpus'} {path}")))

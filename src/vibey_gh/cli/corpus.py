"""`vibey-gh slots corpus`: build a pool, draw a corpus, or show one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import BadInput
from .common import emit_json, json_option, library_errors, window_option

_PATH = click.Path(path_type=Path)


@click.command()
@click.option("--specs", "specs", multiple=True, type=_PATH, help="Lane spec file or folder.")
@click.option(
    "--sample-specs", type=int, default=None, help="Use a seeded sample of this many specs."
)
@click.option("--from-lanes", multiple=True, type=_PATH, help="Folder of lane events.jsonl.")
@click.option(
    "--from-my-lanes",
    is_flag=True,
    help="The lanes `lane run` and `storm run` recorded in the state folder (as --from-lanes "
    "STATE/lanes, wherever the state folder is on this machine).",
)
@click.option("--from-transcripts", multiple=True, type=_PATH, help="JSON Lines transcripts.")
@click.option(
    "--from-chat-logs",
    multiple=True,
    type=_PATH,
    help="JSON Lines of OpenAI-style `messages` arrays (what agent tools export).",
)
@click.option("--demo", is_flag=True, help="The shipped demo specs over the package's sources.")
@window_option("Tokens per slot (default: config).")
@click.option("--segments-per-stratum", type=int, default=None, help="Default 5 (demo 2).")
@click.option("--segment-turns", type=int, default=None, help="Default 3 (demo 2).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every draw.")
@click.option("--out", "out", type=_PATH, default=None, help="Corpus file to write.")
@click.option("--show", "show", type=_PATH, default=None, help="Summarize a corpus file.")
@json_option
@library_errors
def corpus(
    specs: tuple[Path, ...],
    sample_specs: int | None,
    from_lanes: tuple[Path, ...],
    from_my_lanes: bool,
    from_transcripts: tuple[Path, ...],
    from_chat_logs: tuple[Path, ...],
    demo: bool,
    window: int | None,
    segments_per_stratum: int | None,
    segment_turns: int | None,
    seed: int,
    out: Path | None,
    show: Path | None,
    as_json: bool,
) -> None:
    """Build a storm-shaped pool of turns and draw a stratified corpus for calibrations.

    A pool comes from lane specs (--specs, repeatable: each spec's plan, then one read_file
    turn per file at the spec's commit), from lane records (--from-lanes: the payloads the
    lanes sent) or from transcripts (--from-transcripts, or --from-chat-logs: JSON Lines of
    OpenAI-style `messages` arrays, bare or under "messages"). The corpus takes
    --segments-per-stratum segments of --segment-turns consecutive turns in each quarter of
    --window by estimate (characters ÷ 3). The same inputs give a byte-identical file.

    \b
    Examples:
      vibey-gh slots corpus --specs lanes/specs --window 65536 --out corpus.json
      vibey-gh slots corpus --specs lanes/specs --sample-specs 40 --seed 0 --out corpus.json
      vibey-gh slots corpus --from-my-lanes --out corpus.json
      vibey-gh slots corpus --from-lanes other-host/lanes --out corpus.json
      vibey-gh slots corpus --from-transcripts chats.jsonl --window 8192 --out corpus.json
      vibey-gh slots corpus --from-chat-logs agent-export.jsonl --out corpus.json
      vibey-gh slots corpus --demo --out demo-corpus.json
      vibey-gh slots corpus --show corpus.json --json
    """
    from ..slots.corpus.corpus import (
        DEFAULT_SEGMENT_TURNS,
        DEFAULT_SEGMENTS_PER_STRATUM,
        DEMO_SEGMENT_TURNS,
        DEMO_SEGMENTS_PER_STRATUM,
        DEMO_WINDOW,
        build_corpus,
        build_demo_corpus,
        corpus_summary,
        load_corpus,
        write_corpus,
    )
    from ..slots.corpus.pool import build_pool

    from_transcripts = (*from_transcripts, *from_chat_logs)
    if from_my_lanes:
        from .common import collaborators

        from_lanes = (*from_lanes, collaborators().layout().lanes)
    building = bool(specs or from_lanes or from_transcripts or demo)
    if show is not None:
        if building or out is not None:
            raise BadInput("--show reads a corpus; it takes no inputs and no --out")
        summary = corpus_summary(load_corpus(show))
        _render(summary, show, as_json, written=False)
        return
    if not building:
        raise BadInput(
            "nothing to do: give --specs, --from-lanes (--from-my-lanes), --from-transcripts "
            "or --demo "
            "with --out FILE, or --show FILE"
        )
    if out is None:
        raise BadInput("--out FILE is required to write the corpus")
    if demo:
        if specs or from_lanes or from_transcripts or sample_specs is not None:
            raise BadInput("--demo uses the shipped specs; give no other inputs")
        built = build_demo_corpus(
            window=_given(window, DEMO_WINDOW),
            segments_per_stratum=_given(segments_per_stratum, DEMO_SEGMENTS_PER_STRATUM),
            segment_turns=_given(segment_turns, DEMO_SEGMENT_TURNS),
            seed=seed,
        )
    else:
        if window is None:
            from ..config import load_config

            window = load_config().window
        pool = build_pool(
            specs=specs,
            sample_specs=sample_specs,
            from_lanes=from_lanes,
            from_transcripts=from_transcripts,
            seed=seed,
        )
        built = build_corpus(
            pool,
            window=window,
            segments_per_stratum=_given(segments_per_stratum, DEFAULT_SEGMENTS_PER_STRATUM),
            segment_turns=_given(segment_turns, DEFAULT_SEGMENT_TURNS),
            seed=seed,
        )
    write_corpus(built, out)
    _render(corpus_summary(built), out, as_json, written=True)


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def _render(summary: dict[str, Any], path: Path, as_json: bool, *, written: bool) -> None:
    if as_json:
        emit_json({**summary, "path": str(path)})
        return
    verb = "wrote" if written else "corpus"
    click.echo(f"{verb} {path}")
    click.echo(f"  corpus sha256  {summary['corpus_sha256']}")
    click.echo(
        f"  pool sha256    {summary['pool_sha256']}  "
        f"({summary['pool_turns']:,} turns in {summary['pool_runs']:,} runs)"
    )
    click.echo(
        f"  window {summary['window']:,}, seed {summary['seed']}, "
        f"{summary['segments']} segments of {summary['segment_turns']} turns "
        f"({summary['turns']} turns, deepest estimate {summary['max_depth_estimate']:,})"
    )
    if summary["dropped_over_window"]:
        dropped = summary["dropped_over_window"]
        click.echo(f"  dropped {dropped:,} pool turns deeper than the window")
    for commit in summary["commits"]:
        where = commit["commit"] or f"working tree, {len(commit.get('files', {}))} files hashed"
        click.echo(f"  read {commit['repository']} at {where}")
    click.echo("  strata (by estimate):")
    for stratum in summary["strata_detail"]:
        short = (
            f"  short by {stratum['shortfall']} (the pool offered {stratum['available']})"
            if stratum["shortfall"]
            else ""
        )
        click.echo(
            f"    {stratum['name']:>10}  {stratum['segments']} of {stratum['wanted']}{short}"
        )

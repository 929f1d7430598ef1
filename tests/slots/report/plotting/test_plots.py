"""The report's PNG plots: every one exists, is a real PNG, and has the axes it promises."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.evidence import RECORDED
from tests.support.slot_builders import make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.evidence.store import Evidence, evidence_from_json, load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.report.plotting.plots import (
    PLOT_AXES,
    PLOT_NAMES,
    build_figures,
    figure_png,
    plots_available,
    sweep_timeline,
    write_plots,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def evidence_of(steps: list[StepRecord]) -> Evidence:
    return evidence_from_json(
        {
            "kind": "vibey-gh-evidence",
            "fingerprint": {"id": "0123456789abcdef", "fields": {"window": 4096}},
            "created_at": 1_800_000_000.0,
            "steps": [as_json(s) for s in steps],
        },
        None,
    )


def figures_for(evidence: Evidence, bounds: Bounds | None = None) -> dict:
    bounds = bounds or Bounds()
    return build_figures(evidence, judge_sweep(evidence.steps, bounds), bounds)


def test_every_plot_has_its_axes_and_every_axis_is_labelled_with_units() -> None:
    figures = figures_for(load_evidence(RECORDED))
    assert tuple(figures) == PLOT_NAMES
    for name, figure in figures.items():
        axes = figure.get_axes()
        assert len(axes) == PLOT_AXES[name], name
        for ax in axes:
            assert "(" in ax.get_ylabel() and ")" in ax.get_ylabel(), (name, ax.get_ylabel())
        assert "(" in axes[-1].get_xlabel(), (name, axes[-1].get_xlabel())


def test_throughput_band_spans_the_two_one_slot_runs() -> None:
    evidence = load_evidence(RECORDED)
    judgement = judge_sweep(evidence.steps, Bounds())
    turns_ax = figures_for(evidence)["throughput"].get_axes()[0]
    one_slot = [v.metrics.turns_per_hour for v in judgement.verdicts if v.slots == 1]
    bands = [p for p in turns_ax.patches if "one-slot" in str(p.get_label())]
    assert len(bands) == 1
    low, high = bands[0].get_y(), bands[0].get_y() + bands[0].get_height()
    assert (low, high) == pytest.approx((min(one_slot), max(one_slot)), rel=1e-6)


def test_fidelity_plot_draws_the_threshold_from_the_bounds() -> None:
    evidence = load_evidence(RECORDED)
    bounds = Bounds(fidelity_tolerance=0.2)
    ax = figures_for(evidence, bounds)["fidelity"].get_axes()[0]
    threshold = [line for line in ax.get_lines() if "threshold" in str(line.get_label())]
    assert len(threshold) == 1
    assert threshold[0].get_ydata()[0] == pytest.approx(0.8)


def test_write_plots_writes_valid_pngs_that_matplotlib_reads_back(tmp_path: Path) -> None:
    import matplotlib.image

    evidence = load_evidence(RECORDED)
    judgement = judge_sweep(evidence.steps, Bounds())
    written = write_plots(evidence, judgement, Bounds(), tmp_path, "ev")
    assert [p.name for p in written] == [f"ev-{name}.png" for name in PLOT_NAMES]
    for path in written:
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        pixels = matplotlib.image.imread(path)
        height, width = pixels.shape[:2]
        assert width >= 800 and height >= 400, path.name


def test_png_bytes_carry_no_software_tag() -> None:
    figure = figures_for(load_evidence(RECORDED))["latency"]
    data = figure_png(figure)
    assert data.startswith(PNG_SIGNATURE)
    assert b"Matplotlib version" not in data


def test_timeline_lays_steps_end_to_end_with_swap_rates() -> None:
    steps = [
        make_step(0, 1, same_answers(), duration=100.0, swap_mb=0.0),
        make_step(1, 1, same_answers(), duration=100.0, swap_mb=0.0),
        make_step(2, 2, same_answers(), duration=50.0, swap_mb=120.0, wired_gb=6.0),
    ]
    line = sweep_timeline(steps, ["N=1", "N=1 again", "N=2"], 0.8)
    assert line.x == [0.0, 100.0, 100.0, 200.0, 200.0, 250.0]
    assert [(s, e, n) for s, e, n, _ in line.steps] == [
        (0.0, 100.0, "N=1"),
        (100.0, 200.0, "N=1 again"),
        (200.0, 250.0, "N=2"),
    ]
    assert line.steps[0][3] == pytest.approx(0.8 * 24.0)  # ceiling in GB of the 24 GB budget
    assert line.wired_gb[-1] == pytest.approx(6.0)
    assert line.free_pct[0] == pytest.approx(50.0)
    # the first sample of each step has no rate; the last of N=2 swapped 120 MB/min
    assert math.isnan(line.swap_out_mb_per_min[0]) and math.isnan(line.swap_out_mb_per_min[4])
    assert line.swap_out_mb_per_min[5] == pytest.approx(120.0)
    assert all(math.isnan(v) for v in line.runner_rss_gb)


def test_a_lone_one_slot_step_still_gives_every_plot(tmp_path: Path) -> None:
    evidence = evidence_of([make_step(0, 1, same_answers())])
    figures = figures_for(evidence)
    assert {name: len(f.get_axes()) for name, f in figures.items()} == PLOT_AXES
    texts = [t.get_text() for t in figures["fidelity"].get_axes()[0].texts]
    assert "no step was compared with the first one-slot run" in texts
    written = write_plots(evidence, judge_sweep(evidence.steps, Bounds()), Bounds(), tmp_path, "x")
    assert all(p.read_bytes().startswith(PNG_SIGNATURE) for p in written)


def test_missing_readings_become_gaps_not_zeros() -> None:
    step = make_step(0, 1, same_answers())
    gappy = checked(
        {
            **as_json(step),
            "timeline": [
                [0.0, None, None, None, None, None, None, None],
                [10.0, None, None, None, None, None, None, None],
            ],
        },
        StepRecord,
    )
    line = sweep_timeline([gappy], ["N=1"], 0.8)
    assert all(math.isnan(v) for v in line.wired_gb + line.free_pct + line.swap_out_mb_per_min)
    assert len(figures_for(evidence_of([gappy]))["memory"].get_axes()) == 3


def test_matplotlib_keeps_its_config_and_cache_under_the_state_root(tmp_path: Path) -> None:
    """A fresh process (matplotlib reads MPLCONFIGDIR once, on import) with an empty home."""
    import os
    import subprocess
    import sys

    home, state = tmp_path / "home", tmp_path / "state"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MPL", "XDG_"))}
    env.update(HOME=str(home), VIBEY_GH_SLOTS_DIR=str(state))
    script = (
        "from pathlib import Path\n"
        "from vibey_gh.interfaces.bounds import Bounds\n"
        "from vibey_gh.slots.evidence.store import load_evidence\n"
        "from vibey_gh.slots.judging.judge import judge_sweep\n"
        "from vibey_gh.slots.report.plotting.plots import build_figures\n"
        f"evidence = load_evidence(Path({str(RECORDED)!r}))\n"
        "build_figures(evidence, judge_sweep(evidence.steps, Bounds()), Bounds())\n"
        "import matplotlib\n"
        "print(matplotlib.get_configdir())\n"
        "print(matplotlib.get_cachedir())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    expected = state / "cache" / "matplotlib"
    assert done.stdout.split() == [str(expected), str(expected)]
    assert expected.stat().st_mode & 0o777 == 0o700
    assert list(home.iterdir()) == []


def test_every_plot_title_names_model_runner_device_and_window() -> None:
    figures = figures_for(load_evidence(RECORDED))
    expected = (
        "\nSmolLM2-135M-Instruct.Q4_1.gguf on embedded xllamacpp 2026.10.11549, AMD EPYC, "
        "window 4096"
    )
    for name, figure in figures.items():
        assert figure.get_suptitle().endswith(expected), name


def test_without_matplotlib_there_are_no_plots() -> None:
    assert plots_available() is True  # this install has the plots extra
    assert plots_available(lambda name: None) is False


def _gained_evidence(
    model: str = "/srv/models/a/very/long/folder/qwen3-8b-q4_k_m.gguf",
) -> Evidence:
    from tests.slots.judging.test_steady_state import closed_loop

    steps = [closed_loop(1, [1.0] * 60, index=i) for i in range(2)]
    steps += [closed_loop(2, [1.0] * 60, index=2), closed_loop(3, [0.5] * 2, index=3)]
    return evidence_from_json(
        {
            "kind": "vibey-gh-evidence",
            "fingerprint": {
                "id": "0123456789abcdef",
                "fields": {
                    "window": 4096,
                    "runner_kind": "simulated",
                    "runner_version": "simulated 0.1.0",
                    "processor": "AMD EPYC",
                },
            },
            "created_at": 1_800_000_000.0,
            "runner": {"model": model},
            "steps": [as_json(s) for s in steps],
        },
        None,
    )


def test_titles_are_short_and_name_the_runner_once() -> None:
    figures = figures_for(_gained_evidence(), Bounds(min_gain=0.10, confidence=0.9))
    title = figures["throughput"].get_suptitle()
    assert title.splitlines() == [
        "Throughput against slots",
        "qwen3-8b-q4_k_m.gguf on simulated 0.1.0, AMD EPYC, window 4096",
    ]


def test_the_ideal_n_is_on_every_plot() -> None:
    figures = figures_for(_gained_evidence(), Bounds(min_gain=0.10, confidence=0.9))
    for name, figure in figures.items():
        labels = [
            str(artist.get_label())
            for ax in figure.get_axes()
            for artist in [*ax.get_lines(), *ax.patches, *ax.collections]
        ]
        assert any(label == "ideal N = 2" for label in labels), name


def test_a_point_without_an_interval_is_hollow_and_legends_sit_beside_the_data() -> None:
    figures = figures_for(_gained_evidence(), Bounds(min_gain=0.10, confidence=0.9))
    turns_ax = figures["throughput"].get_axes()[0]
    at_three = [line for line in turns_ax.get_lines() if list(line.get_xdata()) == [3]]
    assert at_three and all(line.get_markerfacecolor() == "none" for line in at_three)
    at_two = [
        line
        for line in turns_ax.get_lines()
        if list(line.get_xdata()) == [2] and line.get_marker() == "o"
    ]
    assert at_two and all(line.get_markerfacecolor() != "none" for line in at_two)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for name, figure in figures.items():
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        for ax in figure.get_axes():
            legend = ax.get_legend()
            if legend is not None:
                beside = legend.get_window_extent(renderer).x0
                assert beside >= ax.get_window_extent(renderer).x1 - 1, name


def test_a_long_subtitle_is_wrapped_inside_the_figure_never_cut() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    model = "/m/" + "an-exceedingly-long-model-file-name-" * 4 + "q4_k_m.gguf"
    figures = figures_for(_gained_evidence(model), Bounds(min_gain=0.10, confidence=0.9))
    for name, figure in figures.items():
        title = figure.get_suptitle()
        assert "…" not in title and model.rsplit("/", 1)[-1] in title.replace("\n", ""), name
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        box = figure._suptitle.get_window_extent(canvas.get_renderer())  # type: ignore[union-attr]
        assert box.x0 >= 0 and box.x1 <= figure.bbox.x1, name


def test_only_points_whose_own_bound_broke_are_crossed() -> None:
    """A step that broke the memory bound: crossed on the throughput plot (it does not
    count), not on the fidelity plot, whose structural agreement it kept."""
    from msgspec.structs import replace as replaced

    evidence = _gained_evidence()
    judged = judge_sweep(evidence.steps, Bounds(min_gain=0.10, confidence=0.9))
    memory = "wired 30.00 GB crossed the ceiling 25.60 GB"
    broken = [
        replaced(v, broken=(memory,), inside_bounds=False) if v.slots == 2 else v
        for v in judged.verdicts
    ]
    from matplotlib.figure import Figure

    from vibey_gh.slots.report.plotting.plot_parts import breaks, breaks_any, points

    for broke, crossed in ((breaks_any, True), (breaks("fidelity"), False)):
        ax = Figure().subplots()
        points(ax, broken, [1.0 for _ in broken], "agreement", broke=broke)
        markers = [line.get_marker() for line in ax.get_lines() if list(line.get_xdata()) == [2]]
        assert ("X" in markers) is crossed


def test_tg_per_stream_is_drawn_beside_the_output_only_where_the_runner_timed_it() -> None:
    import msgspec

    from vibey_gh.interfaces.turns import RunnerTimings
    from vibey_gh.slots.report.plotting.plots import throughput_figure

    def tg_label(steps: list[StepRecord]) -> list[str]:
        judgement = judge_sweep(steps, Bounds())
        tokens_ax = throughput_figure(judgement, "t").get_axes()[1]
        return [str(ln.get_label()) for ln in tokens_ax.get_lines() if "tg" in str(ln.get_label())]

    timed = [
        msgspec.structs.replace(a, runner_timings=RunnerTimings(100, 0.5, 10, 0.5 + i / 100))
        for i, a in enumerate(same_answers())
    ]
    assert tg_label([make_step(0, 1, timed), make_step(1, 1, timed), make_step(2, 2, timed)]) == [
        "tg per stream (runner's timing, mean ± sd)"
    ]
    untimed = [make_step(0, 1, same_answers()), make_step(1, 2, same_answers())]
    assert tg_label(untimed) == []

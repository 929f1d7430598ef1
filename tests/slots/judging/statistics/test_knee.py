"""The ideal N is the knee: the rule as a pure function of throughputs with their noise, and
the same rule through the judge that `slots allowed` and the report use."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.figures import (
    Agreement,
    BaselineFigures,
    StepFigures,
    StepMetrics,
    SweepFigures,
)
from vibey_gh.slots.judging.judge import judge_figures
from vibey_gh.slots.judging.statistics.knee import (
    ADDS_LESS,
    UNDECIDED,
    Rate,
    best_of,
    gain_against,
    knee,
    plateau_sentence,
    rate_against,
    rate_over,
)
from vibey_gh.slots.judging.statistics.stats import Estimate, t_quantile

GB = 1_000_000_000
BATCHES = 10

# A calibration on the simulated runner with short turns (knee 4, noise 0.2, 3000 tokens/s):
# N, turns/h and the low end of its 90% interval. The one-slot runs were measured to ±2%.
PLATEAU_TABLE = [
    (1, 106_234.0, 104_110.0),
    (1, 106_008.0, 103_890.0),
    (2, 204_154.0, 198_600.0),
    (3, 296_459.0, 288_700.0),
    (4, 409_991.0, 402_200.0),
    (5, 432_300.0, 425_200.0),
    (6, 443_067.0, 434_900.0),
]


def _se(point: float, low: float) -> float:
    """The standard error whose 90% interval over ten batch means reaches `low`."""
    return (point - low) / t_quantile(0.95, BATCHES - 1)


def _rates(table: list[tuple[int, float, float]]) -> list[Rate]:
    return [
        Rate(i, slots, Estimate(point, _se(point, low), BATCHES), qualifies=slots > 1)
        for i, (slots, point, low) in enumerate(table)
    ]


def test_the_plateau_table_answers_the_knee() -> None:
    found = knee(_rates(PLATEAU_TABLE), min_gain=0.10, confidence=0.9)
    assert found is not None
    assert found.chosen.slots == 4
    # every step up to the knee showed a 10% gain over the one before; N=5 and N=6 are what
    # patience calls no gain
    assert [r.slots for r in found.climbed] == [2, 3, 4]
    assert [(p.slots, round(p.adds, 3), p.below_min_gain) for p in found.past] == [
        (5, 0.054, True),
        (6, 0.025, True),
    ]
    sentence = plateau_sentence(found, 0.10)
    assert sentence == (
        "N=5 and 6 add +5.4% and +2.5% more turns/h, each over the best step before it: "
        "below min_gain (10%)"
    )


def test_the_plateau_table_through_the_judge() -> None:
    judged = judge_figures(_figures(PLATEAU_TABLE), Bounds(min_gain=0.10, confidence=0.9))
    assert [v.label for v in judged.verdicts[2:]] == ["qualifies"] * 5
    assert judged.ideal == 4
    assert "the knee is 4: N=5 and 6 add +5.4% and +2.5% more turns/h" in judged.reason
    assert judged.knee is not None and judged.knee.chosen.slots == 4


def test_without_a_step_past_the_knee_nothing_is_said_about_a_plateau() -> None:
    judged = judge_figures(_figures(PLATEAU_TABLE[:5]), Bounds(min_gain=0.10, confidence=0.9))
    assert judged.ideal == 4
    assert "knee" not in judged.reason


def test_a_clear_gain_past_a_small_one_still_counts() -> None:
    # N=3 adds 5% over N=2, N=4 adds 30% over N=3: the knee moved on to 4
    table = [(1, 100.0, 98.0), (1, 100.0, 98.0), (2, 190.0, 187.0), (3, 200.0, 197.0)]
    table += [(4, 260.0, 256.0), (5, 262.0, 258.0)]
    found = knee(_rates(table), 0.10, 0.9)
    assert found is not None and found.chosen.slots == 4
    assert [r.slots for r in found.climbed] == [2, 4]


def test_a_gain_the_interval_cannot_show_is_never_paid_for() -> None:
    # N=5 measured 8% above N=4 but so noisily that its interval reaches +20%: not "no gain",
    # not shown either, so N=4 is kept
    table = [(1, 100.0, 98.0), (1, 100.0, 98.0), (2, 190.0, 187.0), (3, 280.0, 276.0)]
    table += [(4, 360.0, 355.0), (5, 389.0, 340.0)]
    found = knee(_rates(table), 0.10, 0.9)
    assert found is not None and found.chosen.slots == 4
    assert found.past[0].slots == 5 and not found.past[0].below_min_gain
    assert plateau_sentence(found, 0.10) == (
        "N=5 adds +8.1% more turns/h, over the best step before it: not shown to add min_gain (10%)"
    )


def test_small_gains_do_not_add_up_to_a_knee() -> None:
    # each step past N=2 adds 8%: together 26%, but no step paid for itself
    table = [(1, 100.0, 99.5), (1, 100.0, 99.5), (2, 190.0, 189.0), (3, 205.2, 204.2)]
    table += [(4, 221.6, 220.6), (5, 239.3, 238.3)]
    found = knee(_rates(table), 0.10, 0.9)
    assert found is not None and found.chosen.slots == 2
    assert all(p.below_min_gain for p in found.past)


def test_when_every_qualifying_step_is_held_back_the_answer_is_one() -> None:
    # N=2 gains 8% over one slot (no gain), N=3 gains 12% (qualifies) but only 4% over N=2
    table = [(1, 100.0, 99.5), (1, 100.0, 99.5), (2, 108.0, 107.5), (3, 112.0, 111.5)]
    rates = [
        Rate(i, slots, Estimate(point, _se(point, low), BATCHES), qualifies=slots == 3)
        for i, (slots, point, low) in enumerate(table)
    ]
    assert knee(rates, 0.10, 0.9) is None


def test_a_step_outside_the_bounds_holds_no_step_back() -> None:
    table = [(1, 100.0, 98.0), (1, 100.0, 98.0), (2, 200.0, 196.0), (3, 210.0, 206.0)]
    rates = _rates(table)
    rates[2] = Rate(2, 2, rates[2].throughput, qualifies=False, counts=False)
    found = knee(rates, 0.10, 0.9)
    assert found is not None and found.chosen.slots == 3
    rates[2] = Rate(2, 2, rates[2].throughput, qualifies=False, counts=True)
    assert knee(rates, 0.10, 0.9) is None  # inside the bounds, N=2 holds N=3 back


def test_an_unlucky_low_reading_of_the_step_before_lets_no_step_climb_over_it() -> None:
    # the truth: N=2 serves 180, N=3 185. N=2 was read low and noisily (160, ±25), N=3
    # precisely (185, ±2): over N=2 as a point N=3 gains 16%, over N=2 with its noise it may
    # gain nothing
    table = [(1, 100.0, 99.0), (1, 100.0, 99.0), (2, 160.0, 135.0), (3, 185.0, 183.0)]
    found = knee(_rates(table), 0.10, 0.9)
    assert found is not None and found.chosen.slots == 2
    assert [r.slots for r in found.climbed] == [2]


def test_a_step_too_short_for_an_interval_sets_no_bar() -> None:
    # N=2 held too few turns for an interval and read a lucky 300; N=3 gains 80% over one slot
    table = [(1, 100.0, 99.0), (1, 100.0, 99.0), (2, 300.0, 300.0), (3, 180.0, 177.0)]
    rates = _rates(table)
    rates[2] = Rate(2, 2, Estimate(300.0), qualifies=False, too_short=True)
    found = knee(rates, 0.10, 0.9)
    assert found is not None and found.chosen.slots == 3
    rates[2] = Rate(2, 2, Estimate(300.0), qualifies=False, too_short=False)
    assert knee(rates, 0.10, 0.9) is None  # as a bar, the lucky point held N=3 back


def test_a_step_shown_paired_to_add_nothing_never_climbs_over_a_narrow_one_slot_bar() -> None:
    # one slot's runs disagreed (a load spike in the second), so every larger step's interval
    # over one slot is wide and one slot, read narrowly, surely serves most: the bar. N=6
    # reads +117% over it with its low end above +10%, although, paired with N=3, N=4 and N=5
    # (the same runner, a standard error of 2% on each ratio), it serves what they served.
    table = [(1, 6000.0, 5900.0), (1, 5000.0, 4900.0), (2, 10000.0, 5000.0)]
    table += [(3, 12000.0, 5200.0), (4, 12200.0, 5300.0), (5, 12300.0, 5400.0)]
    table += [(6, 12400.0, 7500.0)]
    rates = [replace(r, qualifies=r.slots == 6) for r in _rates(table)]
    paired = tuple((i, 0.02) for i in range(2, 6))
    rates[-1] = replace(rates[-1], paired=paired)
    assert knee(rates, 0.10, 0.9) is None  # one slot: N=6 adds nothing over N=3…5
    # unpaired, their wide intervals cannot show it: N=6 climbs over the one-slot bar as before
    rates[-1] = replace(rates[-1], paired=())
    found = knee(rates, 0.10, 0.9)
    assert found is not None and found.chosen.slots == 6


def test_the_bar_is_a_step_shown_paired_to_serve_more_than_the_surest_one_slot_run() -> None:
    # the same sweep, every step paired with every step before it: by the low ends of their
    # intervals over one slot, one slot surely serves most; paired, N=3 serves 2× its first
    # run, so the bar moves up to the steps shown to serve more, and ends at the surest of
    # the steps no other is shown to beat
    table = [(1, 6000.0, 5900.0), (1, 5000.0, 4900.0), (2, 10000.0, 5000.0)]
    table += [(3, 12000.0, 5200.0), (4, 12200.0, 5300.0), (5, 12300.0, 5400.0)]
    rates = [replace(r, paired=tuple((i, 0.02) for i in range(r.index))) for r in _rates(table)]
    bar = best_of(rates, 0.9)
    assert bar is not None and bar.slots == 5
    # unpaired, one slot stays the bar
    unpaired = best_of([replace(r, paired=()) for r in rates], 0.9)
    assert unpaired is not None and unpaired.slots == 1


# --- properties, over sweeps N = 1, 1, 2, 3, … with any throughputs and noise


@st.composite
def sweeps(draw: st.DrawFn) -> list[Rate]:
    """A sweep's rates: two one-slot runs, then N = 2… with any point, any relative noise
    (none, or 0.5–15% standard error) and any qualifying steps."""
    count = draw(st.integers(min_value=1, max_value=7))
    rates = []
    for index in range(count + 2):
        slots = 1 if index < 2 else index
        point = draw(st.floats(min_value=50.0, max_value=500.0))
        noise = draw(st.one_of(st.none(), st.floats(min_value=0.005, max_value=0.15)))
        estimate = Estimate(point, None if noise is None else point * noise, BATCHES)
        qualifies = slots > 1 and draw(st.booleans())
        rates.append(Rate(index, slots, estimate, qualifies=qualifies))
    return rates


def _ideal(rates: list[Rate], min_gain: float) -> int:
    found = knee(rates, min_gain, 0.9)
    return 1 if found is None else found.chosen.slots


@settings(max_examples=400, deadline=None)
@given(sweeps(), st.floats(min_value=0.0, max_value=0.5), st.floats(min_value=0.0, max_value=0.5))
def test_a_larger_min_gain_never_answers_more_slots(
    rates: list[Rate], first: float, second: float
) -> None:
    low, high = sorted((first, second))
    assert _ideal(rates, high) <= _ideal(rates, low)


@settings(max_examples=400, deadline=None)
@given(sweeps(), st.floats(min_value=0.0, max_value=0.5))
def test_the_answer_is_never_above_the_best_qualifying_step(
    rates: list[Rate], min_gain: float
) -> None:
    found = knee(rates, min_gain, 0.9)
    qualifying = [r for r in rates if r.qualifies]
    if found is None:
        return
    best = max(qualifying, key=lambda r: (r.throughput.value, -r.slots))
    assert found.chosen.qualifies and found.chosen.slots <= best.slots


@settings(max_examples=400, deadline=None)
@given(sweeps(), st.floats(min_value=0.0, max_value=0.5))
def test_the_answer_never_added_less_than_min_gain_over_a_step_before_it(
    rates: list[Rate], min_gain: float
) -> None:
    found = knee(rates, min_gain, 0.9)
    if found is None:
        return
    chosen = found.chosen
    before = [r for r in rates if r.index < chosen.index and r.counts]
    assert ADDS_LESS not in {
        gain_against(chosen.throughput, r.throughput, min_gain, 0.9) for r in before
    }
    smaller = [r for r in rates if r.qualifies and r.slots < chosen.slots]
    if smaller:
        # in the words of the rule of thumb: never a step that gained less than min_gain
        # over every smaller qualifying step
        assert not all(
            chosen.throughput.value < (1.0 + min_gain) * r.throughput.value
            and gain_against(chosen.throughput, r.throughput, min_gain, 0.9) == ADDS_LESS
            for r in smaller
        )


# --- figures built from a table, for the judge


def _metrics(point: float, se: float) -> StepMetrics:
    return StepMetrics(
        served=600, total=600, duration_s=60.0, turns_per_hour=point, output_tokens_per_s=1.0,
        p50_s=1.0, p95_s=2.0, peak_wired_bytes=1 * GB, min_free_share=0.5,
        swap_out_mb_per_min=0.0, peak_gpu_share=None, prompt_tokens_min=10,
        prompt_tokens_p50=100, prompt_tokens_max=1000, window_start=0.0, window_end=60.0,
        window_turns=600, batches=BATCHES, turns_per_hour_se=se,
    )  # fmt: skip


def _figures(table: list[tuple[int, float, float]]) -> SweepFigures:
    steps = tuple(
        StepFigures(
            index=i,
            slots=slots,
            is_reference=i == 0,
            metrics=_metrics(point, _se(point, low)),
            memory_budget_bytes=16 * GB,
            agreement=None if i == 0 else Agreement(40, 40, 40, ()),
            failed_served=(),
            log_findings=(),
            reasonless=0,
        )
        for i, (slots, point, low) in enumerate(table)
    )
    best = max((s for s in steps if s.slots == 1), key=lambda s: s.metrics.turns_per_hour)
    baseline = BaselineFigures(
        1.0,
        best.metrics.turns_per_hour,
        0.0,
        best.metrics.turns_per_hour_se,
        BATCHES,
    )
    return SweepFigures(baseline, steps)


@st.composite
def tables(draw: st.DrawFn) -> list[tuple[int, float, float]]:
    """(N, turns/h, low end of its 90% interval) for N = 1, 1, 2, …"""
    rows = []
    for index in range(draw(st.integers(min_value=3, max_value=9))):
        point = draw(st.floats(min_value=50.0, max_value=500.0))
        noise = draw(st.floats(min_value=0.001, max_value=0.2))
        rows.append((1 if index < 2 else index, point, point * (1.0 - noise)))
    return rows


@settings(max_examples=300, deadline=None)
@given(tables(), st.floats(min_value=0.0, max_value=0.5), st.floats(min_value=0.0, max_value=0.5))
def test_through_the_judge_a_larger_min_gain_never_answers_more_slots(
    table: list[tuple[int, float, float]], first: float, second: float
) -> None:
    """Here what qualifies depends on min_gain too, as it does for `slots allowed`."""
    low, high = sorted((first, second))
    figures = _figures(table)
    loose = judge_figures(figures, Bounds(min_gain=low, confidence=0.9))
    strict = judge_figures(figures, Bounds(min_gain=high, confidence=0.9))
    assert strict.ideal <= loose.ideal


def test_a_step_past_the_knee_that_served_less_is_not_said_to_add_more() -> None:
    from msgspec.structs import replace

    from vibey_gh.slots.judging.statistics.knee import PastKnee

    table = [(1, 100.0, 99.5), (1, 100.0, 99.5), (2, 190.0, 189.0), (3, 280.0, 278.0)]
    found = knee(_rates(table), 0.10, 0.9)
    assert found is not None
    past = (PastKnee(4, 4, 0.054, True), PastKnee(5, 5, -0.014, True))
    sentence = plateau_sentence(replace(found, past=past), 0.10)
    assert sentence == (
        "N=4 and 5 change turns/h by +5.4% and -1.4%, each over the best step before it: "
        "below min_gain (10%)"
    )
    assert "add -" not in sentence


def test_an_interleaved_step_is_held_to_a_one_slot_bar_by_its_own_gain() -> None:
    """Over a one-slot step, an interleaved step reads its gain over its own one-slot blocks
    (as its verdict does); the same +1% read across the two steps, with both runs' noise,
    straddled the 10% bar. Over a larger step it is paired across steps as any step is."""
    one = Rate(0, 1, Estimate(100.0, 2.0, 20), qualifies=False)
    two = Rate(1, 2, Estimate(100.0, 6.0, 20), qualifies=False)
    across = replace(two, paired=((0, 0.056),))
    interleaved = replace(across, own_gain=Estimate(1.006, 0.035, 20))
    assert rate_against(across, one, 0.10, 0.9) == UNDECIDED
    assert rate_against(interleaved, one, 0.10, 0.9) == ADDS_LESS
    low, high = rate_over(interleaved, one, 0.9) or (0.0, 0.0)
    assert low < 1.006 < high < 1.10
    three = Rate(2, 3, Estimate(100.0, 6.0, 20), qualifies=False, paired=((1, 0.056),))
    assert rate_over(replace(three, own_gain=Estimate(1.5, 0.01, 20)), two, 0.9) == rate_over(
        three, two, 0.9
    )
    # too few pairs for an interval: nothing is decided over one slot
    assert rate_over(replace(interleaved, own_gain=Estimate(1.006, 0.035, 2)), one, 0.9) is None

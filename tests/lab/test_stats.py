"""lab.stats: summaries, t intervals, Holm, ratios in words."""
from __future__ import annotations

import random

import pytest

from lab.stats import (
    betainc,
    cv,
    format_seconds,
    holm,
    in_words,
    min_ratio,
    paired_ratio_ci,
    ratio_ci,
    summarize,
    t975,
    t_cdf,
    t_ppf,
)


def test_summary_of_constant_values() -> None:
    s = summarize([2.0] * 5)
    assert (s.mean, s.stdev, s.ci_low, s.ci_high, s.n) == (2.0, 0.0, 2.0, 2.0, 5)


def test_summary_ci_contains_mean_and_shrinks_with_n() -> None:
    rng = random.Random(1)
    small = [rng.gauss(1.0, 0.1) for _ in range(5)]
    large = [rng.gauss(1.0, 0.1) for _ in range(200)]
    a, b = summarize(small), summarize(large)
    assert a.ci_low < a.mean < a.ci_high
    assert (b.ci_high - b.ci_low) < (a.ci_high - a.ci_low)


def test_ratio_detects_a_real_speedup() -> None:
    rng = random.Random(2)
    slow = [rng.gauss(2.0, 0.05) for _ in range(20)]
    fast = [rng.gauss(1.0, 0.05) for _ in range(20)]
    r = ratio_ci(slow, fast)
    assert 1.9 < r.ratio < 2.1
    assert r.ci_low < r.ratio < r.ci_high
    assert r.significant


def test_ratio_of_identical_distributions_is_not_significant() -> None:
    rng = random.Random(3)
    a = [rng.gauss(1.0, 0.1) for _ in range(20)]
    b = [rng.gauss(1.0, 0.1) for _ in range(20)]
    r = ratio_ci(a, b)
    assert r.ci_low < 1.0 < r.ci_high
    assert not r.significant


def test_ratio_is_deterministic() -> None:
    a, b = [1.0, 1.1, 0.9, 1.05], [0.5, 0.52, 0.49, 0.51]
    assert ratio_ci(a, b) == ratio_ci(a, b)
    r = ratio_ci(a, b)
    assert r.ci_low < r.ratio < r.ci_high and 0 <= r.p_value < 0.05


def test_errors_and_formatting() -> None:
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        ratio_ci([], [1.0])
    assert t975(1) == pytest.approx(12.706, abs=1e-3)
    assert t975(10_000) == pytest.approx(1.96, abs=1e-3)
    assert format_seconds(2.5) == "2.500 s"
    assert format_seconds(0.0025) == "2.50 ms"
    assert format_seconds(2.5e-6) == "2.5 us"


def _drifting_rounds(effect: float, rounds: int = 12, per_round: int = 3,
                     seed: int = 5) -> tuple[list[list[float]], list[list[float]]]:
    """slow = effect x fast; both sides of a round share that round's machine speed."""
    rng = random.Random(seed)
    slow, fast = [], []
    for _ in range(rounds):
        drift = rng.uniform(0.8, 1.25)
        slow.append([effect * drift * rng.gauss(1.0, 0.005) for _ in range(per_round)])
        fast.append([drift * rng.gauss(1.0, 0.005) for _ in range(per_round)])
    return slow, fast


def test_paired_ratio_of_identical_rounds_is_one() -> None:
    rounds = [[1.0, 1.1], [0.9, 0.95], [1.2, 1.25]]
    r = paired_ratio_ci(rounds, rounds)
    assert r.ratio == pytest.approx(1.0)
    assert r.ci_low <= 1.0 <= r.ci_high
    assert not r.significant


def test_paired_ratio_recovers_an_effect_under_drift() -> None:
    slow, fast = _drifting_rounds(1.3)
    paired = paired_ratio_ci(slow, fast)
    assert paired.ratio == pytest.approx(1.3, rel=0.01)
    assert paired.ci_low < paired.ratio < paired.ci_high
    assert paired.significant
    unpaired = ratio_ci([v for r in slow for v in r], [v for r in fast for v in r])
    assert (unpaired.ci_high - unpaired.ci_low) > 3 * (paired.ci_high - paired.ci_low)


def test_paired_ratio_is_deterministic_and_checks_its_input() -> None:
    slow, fast = _drifting_rounds(1.05, rounds=4)
    assert paired_ratio_ci(slow, fast) == paired_ratio_ci(slow, fast)
    with pytest.raises(ValueError):
        paired_ratio_ci(slow[:1], fast[:1])
    with pytest.raises(ValueError):
        paired_ratio_ci(slow, fast[:3])
    with pytest.raises(ValueError):
        paired_ratio_ci([[1.0], []], [[1.0], [1.0]])


def test_paired_min_resists_bursts_that_only_add_time() -> None:
    """A 1.25x effect; in every round one value of each side is hit by a burst
    (x1.4 to x2.0, never faster): per-round minima recover 1.25x, means do not."""
    import random as _r
    rng = _r.Random(7)
    slow_rounds, fast_rounds = [], []
    for _ in range(6):
        drift = rng.uniform(0.9, 1.1)
        s = [1.25 * drift * rng.uniform(1.0, 1.01) for _ in range(3)]
        f = [1.00 * drift * rng.uniform(1.0, 1.01) for _ in range(3)]
        s[rng.randrange(3)] *= rng.uniform(1.4, 2.0)
        f[rng.randrange(3)] *= rng.uniform(1.4, 2.0)
        slow_rounds.append(s)
        fast_rounds.append(f)
    by_min = paired_ratio_ci(slow_rounds, fast_rounds, per_round="min")
    by_mean = paired_ratio_ci(slow_rounds, fast_rounds, per_round="mean")
    assert by_min.ratio == pytest.approx(1.25, rel=0.02) and by_min.significant
    assert by_min.ci_high - by_min.ci_low < by_mean.ci_high - by_mean.ci_low
    with pytest.raises(ValueError):
        paired_ratio_ci(slow_rounds, fast_rounds, per_round="median")


def test_min_ratio_ignores_bursts_that_only_add_time() -> None:
    rng = random.Random(3)
    slow = [1.3 * rng.uniform(1.0, 1.02) * (rng.choice([1.0, 1.0, 1.6, 2.0])) for _ in range(10)]
    fast = [1.0 * rng.uniform(1.0, 1.02) * (rng.choice([1.0, 1.0, 1.6, 2.0])) for _ in range(10)]
    assert min_ratio(slow, fast) == pytest.approx(1.3, rel=0.03)
    with pytest.raises(ValueError):
        min_ratio([], fast)


# Student t quantiles and CDF values from standard tables (R's qt/pt to 6+ digits)
@pytest.mark.parametrize("q, df, t", [(0.975, 1, 12.706205), (0.975, 2, 4.302653),
                                      (0.975, 5, 2.570582), (0.975, 30, 2.042272),
                                      (0.995, 5, 4.032143), (0.9, 3, 1.637744),
                                      (0.975, 100, 1.983972), (0.95, 1000, 1.646379)])
def test_t_quantiles_match_the_tables(q: float, df: float, t: float) -> None:
    assert t_ppf(q, df) == pytest.approx(t, abs=2e-6)
    assert t_cdf(t_ppf(q, df), df) == pytest.approx(q, abs=1e-10)
    assert t_ppf(1 - q, df) == pytest.approx(-t_ppf(q, df))


def test_incomplete_beta_known_values() -> None:
    assert betainc(1.0, 1.0, 0.3) == pytest.approx(0.3)               # uniform
    assert betainc(2.0, 3.0, 0.4) == pytest.approx(0.5248)            # 1 - sum binomial
    assert betainc(0.5, 0.5, 0.5) == pytest.approx(0.5)
    assert t_cdf(0.0, 4) == pytest.approx(0.5) and t_cdf(1.0, 1) == pytest.approx(0.75)


def test_holm_adjusts_step_down() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([]) == [] and holm([0.5]) == [0.5]
    assert holm([0.9, 0.9]) == [1.0, 1.0]


def test_noise_alone_is_rarely_significant_after_holm() -> None:
    """17 comparisons of identical distributions, 40 times: Holm keeps the chance of
    any false 'significant' row near 5 %, uncorrected tests cry wolf far more often."""
    rng = random.Random(11)
    any_raw = any_holm = 0
    for _ in range(40):
        ps = [ratio_ci([rng.gauss(1, 0.2) for _ in range(8)],
                       [rng.gauss(1, 0.2) for _ in range(8)]).p_value for _ in range(17)]
        any_raw += any(p < 0.05 for p in ps)
        any_holm += any(p < 0.05 for p in holm(ps))
    assert any_holm <= 6 and any_raw >= 15


def test_ratios_in_words_name_the_faster_side_first() -> None:
    assert in_words("all-off", "all-on", 2.333) == "all-on is 2.33x faster than all-off"
    assert in_words("reftable-lab (all-on)", "git", 6.8) == \
        "git is 6.8x faster than reftable-lab (all-on)"
    assert in_words("reftable-lab (all-on)", "dulwich", 0.001) == \
        "reftable-lab (all-on) is 1e+03x faster than dulwich"
    assert in_words("a", "b", 0.5, "instructions") == "a executes 2x fewer instructions than b"
    assert in_words("a", "b", 1.0) == "b and a: no difference in time"
    assert cv([1.0, 1.0]) == 0.0 and cv([1.0]) == 0.0 and cv([0.9, 1.1]) > 0.05

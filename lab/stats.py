"""Statistics for benchmark results: summaries, ratios with t intervals, Holm, words.

Contract: pure functions, no numpy or scipy. Every interval is a Student t
interval with the exact quantile (t_ppf: bisection on the t CDF, itself the
regularized incomplete beta function by its continued fraction), every test
two-sided at the interval's level; the p-values of one scenario's rows are
corrected together by holm() before anything is called significant.

Time ratios (slow/fast, > 1 when `fast` is faster):
- ratio_ci: independent samples (sequential runs): mean(slow)/mean(fast), the
  interval on the log scale by the delta method with Welch's degrees of freedom.
- paired_ratio_ci: values grouped by interleaved round: the geometric mean of
  the per-round ratios of each round's mean or minimum, a t interval over
  rounds (drift common to one round cancels).
- min_ratio: min(slow)/min(fast), a point estimate only: the minimum of a
  sample has no honest small-sample interval (its bootstrap is degenerate), so
  none is given.
Instruction counts are deterministic: their ratio is exact and needs none of this.
in_words() says a ratio the way a reader asks it: the faster side first, a factor >= 1.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05          # level of every test; intervals are 1 - ALPHA
CV_WARN = 0.05        # a wall-time variant whose stdev/mean exceeds this is flagged


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    stdev: float
    median: float
    ci_low: float        # 95 % CI of the mean (Student t)
    ci_high: float

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "mean": self.mean, "stdev": self.stdev, "median": self.median,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class Ratio:
    """slow/fast: how many times faster `fast` ran than `slow`; p_value of ratio == 1."""
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float = 1.0

    @property
    def significant(self) -> bool:
        """True when the CI excludes 1.0 (uncorrected: see holm() for a scenario's rows)."""
        return self.ci_low > 1.0 or self.ci_high < 1.0

    def as_dict(self) -> dict[str, float | bool]:
        return {"ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p_value": self.p_value, "significant": self.significant}

    def __str__(self) -> str:
        return f"{self.ratio:.2f}x [{self.ci_low:.2f}, {self.ci_high:.2f}]"


# -- Student's t -------------------------------------------------------------

def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x = {x} outside [0, 1]")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df (> 0, not necessarily whole) degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t_cdf: df must be > 0, not {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_ppf(q: float, df: float) -> float:
    """The q quantile of Student's t (the inverse of t_cdf), by bisection."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"t_ppf: q = {q} outside (0, 1)")
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    if q == 0.5:
        return 0.0
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def t975(df: float) -> float:
    """The two-sided 95 % quantile of Student's t (inf for df <= 0)."""
    return t_ppf(0.975, df) if df > 0 else math.inf


def t_two_sided_p(t: float, df: float) -> float:
    return 2.0 * (1.0 - t_cdf(abs(t), df)) if df > 0 else 1.0


# -- summaries and ratios -----------------------------------------------------

def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if n > 1 else 0.0
    half = t975(n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
    return Summary(n, mean, sd, statistics.median(values), mean - half, mean + half)


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation stdev/mean (0 for fewer than two values)."""
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.fmean(values)


def _log_ratio(log_point: float, se: float, df: float, confidence: float) -> Ratio:
    """Ratio exp(log_point) with the t interval log_point +- t*se and the p-value of 0."""
    if se == 0.0:
        point = math.exp(log_point)
        return Ratio(point, point, point, 1.0 if log_point == 0.0 else 0.0)
    half = t_ppf((1.0 + confidence) / 2.0, df) * se
    return Ratio(math.exp(log_point), math.exp(log_point - half), math.exp(log_point + half),
                 t_two_sided_p(log_point / se, df))


def ratio_ci(slow: Sequence[float], fast: Sequence[float],
             confidence: float = 1.0 - ALPHA) -> Ratio:
    """mean(slow)/mean(fast) of independent samples, Welch t interval on the log scale.

    Var(log mean) ~ s^2 / (n mean^2) (the delta method) on each side; the
    degrees of freedom are Welch-Satterthwaite's. With one value on a side the
    interval is (0, inf) and p = 1: nothing can be said.
    """
    if not slow or not fast:
        raise ValueError("ratio_ci needs values on both sides")
    ms, mf = statistics.fmean(slow), statistics.fmean(fast)
    point = math.log(ms / mf)
    if len(slow) < 2 or len(fast) < 2:
        return Ratio(ms / mf, 0.0, math.inf, 1.0)
    a = statistics.variance(slow) / (len(slow) * ms * ms)
    b = statistics.variance(fast) / (len(fast) * mf * mf)
    se2 = a + b
    if se2 == 0.0:
        return _log_ratio(point, 0.0, 1.0, confidence)
    df = se2 * se2 / (a * a / (len(slow) - 1) + b * b / (len(fast) - 1))
    return _log_ratio(point, math.sqrt(se2), df, confidence)


def min_ratio(slow: Sequence[float], fast: Sequence[float]) -> float:
    """min(slow)/min(fast): for a deterministic CPU-bound workload on a machine
    whose disturbances only add time, the least disturbed estimate (Chen &
    Revels, "Robust benchmarking in noisy environments", 2016). No interval:
    shown beside the paired estimate, never tested."""
    if not slow or not fast:
        raise ValueError("min_ratio needs values on both sides")
    return min(slow) / min(fast)


PER_ROUND = {"mean": statistics.fmean, "min": min}


def paired_ratio_ci(slow_rounds: Sequence[Sequence[float]],
                    fast_rounds: Sequence[Sequence[float]],
                    confidence: float = 1.0 - ALPHA, per_round: str = "mean") -> Ratio:
    """slow/fast from interleaved rounds, with a t interval over rounds.

    slow_rounds[r] and fast_rounds[r] are the values both variants got in
    round r. Per round the log ratio log(est(slow_r)/est(fast_r)), est the
    mean or the minimum of the round's values (per_round); the point estimate
    is the geometric mean of the per-round ratios, the interval the t interval
    of the mean log ratio (n - 1 degrees of freedom), the p-value its t test
    against 0. Needs >= 2 rounds. per_round="min" suits a machine whose
    disturbances only add time: a round's fastest value is its least disturbed.
    """
    if per_round not in PER_ROUND:
        raise ValueError(f"per_round must be one of {', '.join(PER_ROUND)}")
    est = PER_ROUND[per_round]
    if len(slow_rounds) != len(fast_rounds):
        raise ValueError(f"paired_ratio_ci: {len(slow_rounds)} rounds of slow values, "
                         f"{len(fast_rounds)} of fast")
    if len(slow_rounds) < 2:
        raise ValueError("paired_ratio_ci needs at least 2 rounds")
    if any(not s for s in slow_rounds) or any(not f for f in fast_rounds):
        raise ValueError("paired_ratio_ci: a round without values")
    logs = [math.log(est(s) / est(f)) for s, f in zip(slow_rounds, fast_rounds)]
    n = len(logs)
    return _log_ratio(math.fsum(logs) / n, statistics.stdev(logs) / math.sqrt(n), n - 1,
                      confidence)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): a row is
    significant at ALPHA when its adjusted p-value is below ALPHA; the chance
    of any false finding among the rows stays below ALPHA."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def factor_text(factor: float) -> str:
    """A factor >= 1 as "2.33x"; one within 1 % of 1 with the digits that tell it from
    1 ("1.0035x", never "1x more")."""
    return f"{factor:.3g}x" if factor >= 1.01 else f"{factor:.4f}x"


def in_words(slow: str, fast: str, ratio: float, measure: str = "time") -> str:
    """"fast is 2.33x faster than slow" (ratio = slow/fast), the faster side
    first whichever it is; for instructions "... executes 2.33x fewer instructions ...",
    for allocations "... makes 2.33x fewer heap allocations ..."."""
    if ratio == 1.0:
        return f"{fast} and {slow}: no difference in {measure}"
    winner, loser, factor = (fast, slow, ratio) if ratio > 1.0 else (slow, fast, 1.0 / ratio)
    if measure == "instructions":
        return f"{winner} executes {factor_text(factor)} fewer instructions than {loser}"
    if measure == "allocations":
        return f"{winner} makes {factor_text(factor)} fewer heap allocations than {loser}"
    return f"{winner} is {factor_text(factor)} faster than {loser}"


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e9:.0f} ns"


def format_count(n: float) -> str:
    """An instruction count: 12.3 G, 456 M, 7.89 k."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f}"

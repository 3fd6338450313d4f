"""Statistics for benchmark results: means, confidence intervals, ratios.

Contract: pure functions over lists of timings (seconds). Ratios come with a
percentile-bootstrap confidence interval (seeded, so a report is reproducible
from the same values). No numpy needed.

ratio_ci treats the two samples as independent. paired_ratio_ci takes values
grouped by interleaved round (both variants timed in every round, close in
time): the per-round ratios cancel drift of the machine's speed that is common
to one round, which the unpaired ratio counts as noise (or, when the variants
ran one after the other, as a bias).
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    stdev: float
    median: float
    ci_low: float        # 95 % CI of the mean (t-approximation)
    ci_high: float

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "mean": self.mean, "stdev": self.stdev, "median": self.median,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class Ratio:
    """slow/fast: how many times faster `fast` ran than `slow`."""
    ratio: float
    ci_low: float
    ci_high: float

    @property
    def significant(self) -> bool:
        """True when the 95 % CI excludes 1.0."""
        return self.ci_low > 1.0 or self.ci_high < 1.0

    def as_dict(self) -> dict[str, float | bool]:
        return {"ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "significant": self.significant}

    def __str__(self) -> str:
        return f"{self.ratio:.2f}x [{self.ci_low:.2f}, {self.ci_high:.2f}]"


# two-sided 97.5 % quantiles of Student's t for small samples; large n -> 1.96
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042,
         40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: int) -> float:
    if df <= 0:
        return math.inf
    best = 1.96
    for k in sorted(_T975):
        if df <= k:
            return _T975[k]
        best = _T975[k]
    return 1.96 if df > 120 else best


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if n > 1 else 0.0
    half = t975(n - 1) * sd / math.sqrt(n) if n > 1 else 0.0
    return Summary(n, mean, sd, statistics.median(values), mean - half, mean + half)


def _percentile_ci(point: float, boots: list[float], confidence: float) -> Ratio:
    """Ratio(point) with the percentile interval of the bootstrap values."""
    boots.sort()
    n = len(boots)
    lo_i = int((1 - confidence) / 2 * n)
    hi_i = min(n - 1, int((1 + confidence) / 2 * n))
    return Ratio(point, boots[lo_i], boots[hi_i])


def _two_sample_ci(slow: Sequence[float], fast: Sequence[float],
                   est: Callable[[Sequence[float]], float], resamples: int, seed: int,
                   confidence: float, who: str) -> Ratio:
    """est(slow)/est(fast), with a percentile-bootstrap CI resampling each side."""
    if not slow or not fast:
        raise ValueError(f"{who} needs values on both sides")
    rng = random.Random(seed)
    ns, nf = len(slow), len(fast)
    boots = [est([slow[rng.randrange(ns)] for _ in range(ns)]) /
             est([fast[rng.randrange(nf)] for _ in range(nf)]) for _ in range(resamples)]
    return _percentile_ci(est(slow) / est(fast), boots, confidence)


def ratio_ci(slow: Sequence[float], fast: Sequence[float], resamples: int = 2000,
             seed: int = 0, confidence: float = 0.95) -> Ratio:
    """mean(slow)/mean(fast) with a percentile-bootstrap CI."""
    return _two_sample_ci(slow, fast, statistics.fmean, resamples, seed, confidence, "ratio_ci")


def min_ratio_ci(slow: Sequence[float], fast: Sequence[float], resamples: int = 2000,
                 seed: int = 0, confidence: float = 0.95) -> Ratio:
    """min(slow)/min(fast) with a percentile-bootstrap CI (each side resampled).

    For a deterministic CPU-bound workload whose disturbances only add time
    (a shared VM: bursts of 1.5-2x, lasting from a fraction of a second to
    minutes, were seen on the lab's machine), the minimum is the least
    disturbed estimate of the undisturbed time (Chen & Revels, "Robust
    benchmarking in noisy environments", 2016). The CI is wide when few values
    landed in quiet moments; interleaving the variants gives each the same
    chance of one.
    """
    return _two_sample_ci(slow, fast, min, resamples, seed, confidence, "min_ratio_ci")


PER_ROUND = {"mean": statistics.fmean, "min": min}


def paired_ratio_ci(slow_rounds: Sequence[Sequence[float]],
                    fast_rounds: Sequence[Sequence[float]], resamples: int = 2000,
                    seed: int = 0, confidence: float = 0.95, per_round: str = "mean") -> Ratio:
    """slow/fast from interleaved rounds, with a bootstrap CI over rounds.

    slow_rounds[r] and fast_rounds[r] are the values both variants got in
    round r. Per round the ratio est(slow_r)/est(fast_r), est the mean or the
    minimum (per_round); the point estimate is the geometric mean of those
    ratios; the CI is the percentile bootstrap of that geometric mean,
    resampling whole rounds. Needs >= 2 rounds.

    per_round="min" suits a deterministic CPU-bound workload on a machine whose
    disturbances only ever add time (a shared VM: bursts of 1.5-2x within one
    process were seen here): the fastest value of a round is the least
    disturbed one (Chen & Revels, "Robust benchmarking in noisy environments",
    2016, argue for the minimum on the same grounds).
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
    point = math.exp(math.fsum(logs) / n)
    rng = random.Random(seed)
    boots = [math.exp(math.fsum(logs[rng.randrange(n)] for _ in range(n)) / n)
             for _ in range(resamples)]
    return _percentile_ci(point, boots, confidence)


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e9:.0f} ns"

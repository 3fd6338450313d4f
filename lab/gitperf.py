"""The `make git-perf` table (scripts/git-perf.sh): git's own t/perf scripts run once with
git and once with the lab in place of git, read from t/perf's result files.

t/perf/run DIR... writes, per test n of script S and per DIR, test-results/<prefix>S.n.result
(min_time.perl's line, the fastest of GIT_PERF_REPEAT_COUNT runs: "[h:]m:s.xx user sys"),
beside S.n.descr (the test's title) and S.subtests (the numbers). The table pairs git's
and the lab's fastest wall time per test, and their ratio (lab / git).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

_TIME = re.compile(r"^(?:(\d+):)?(\d+):(\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$")


def parse_time(line: str) -> tuple[float, float, float]:
    """(real, user, sys) seconds of one min_time.perl / .times line."""
    m = _TIME.match(line.strip())
    if not m:
        raise ValueError(f"not a t/perf time line: {line!r}")
    h, mi, s, user, sys_ = m.groups()
    return (float(h or 0) * 60 + float(mi)) * 60 + float(s), float(user), float(sys_)


def results_prefix(directory: str) -> str:
    """t/perf/run's PERF_RESULTS_PREFIX for a DIR argument (its absolute path)."""
    return "bindir" + re.sub(r"[^a-zA-Z0-9]", "_", directory) + "."


@dataclass(frozen=True)
class Row:
    test: str             # "p1400-update-ref.1"
    title: str
    git: float | None     # fastest wall time, seconds
    lab: float | None

    @property
    def ratio(self) -> float | None:
        return self.lab / self.git if self.git and self.lab is not None else None


def _real(path: Path) -> float | None:
    return parse_time(path.read_text().splitlines()[0])[0] if path.is_file() else None


def table(results: Path, scripts: list[str], git_prefix: str, lab_prefix: str) -> list[Row]:
    rows = []
    for script in scripts:
        subtests = results / f"{script}.subtests"
        if not subtests.is_file():
            continue
        for n in subtests.read_text().split():
            descr = results / f"{script}.{n}.descr"
            title = descr.read_text().strip() if descr.is_file() else ""
            rows.append(Row(f"{script}.{n}", title,
                            _real(results / f"{git_prefix}{script}.{n}.result"),
                            _real(results / f"{lab_prefix}{script}.{n}.result")))
    return rows


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def render(rows: list[Row]) -> str:
    out = ["| test | title | git (s) | lab (s) | lab / git |", "|---|---|---:|---:|---:|"]
    out += [f"| {r.test} | {r.title} | {_f(r.git)} | {_f(r.lab)} | {_f(r.ratio)} |" for r in rows]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.gitperf", description=__doc__.splitlines()[0])
    p.add_argument("results", type=Path, help="t/perf/test-results")
    p.add_argument("git_dir", help="the DIR t/perf/run was given for git")
    p.add_argument("lab_dir", help="the DIR t/perf/run was given for the lab")
    p.add_argument("scripts", nargs="+", help="script names without .sh")
    a = p.parse_args(argv)
    sys.stdout.write(render(table(a.results, a.scripts, results_prefix(a.git_dir),
                                  results_prefix(a.lab_dir))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""date.parse_date gives what git's parse_date gives (`git var GIT_COMMITTER_IDENT`),
in several zones, for git's documented forms, odd zones and refused dates."""
from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest
from reftable_core.errors import ReftableError
from reftable_core.refs.date import parse_date

from gitbin import GitRunner

CASES = [
    "Thu, 07 Apr 2005 22:13:13 +0200", "2005-04-07T22:13:13", "2005-04-07 22:13:13 +0200",
    "@1112911993 +0200", "1112911993 +99999", "1112911993 +0200", "1112911993 -0230",
    "@1112911993 +99999", "1112911993 +0299", "@1112911993 +0299", "2005-04-07T22:13:13Z",
    "2005-04-07T22:13:13+05:30", "20050407T221313", "Apr 7 2005 10:13pm", "7.4.2005 22:13",
    "04/07/2005 22:13:13 EST", "2005-04-07", "garbage", "0 +0000", "@0 +0000", "1 -0100",
    "2100-01-01 00:00 +0000", "2099-12-31 23:59:59 -1200", "1970-01-01 00:00:00 +0100",
    "Thu Apr 7 22:13:13 2005 -0700", "2005-04-07 22:13:13.123 +0200", "12:30 2005-04-07",
    "2005-04-07 22:13 PST", "2005-04-07 22:13 CEST", "2005-04-07 22:13 +02",
    "2005-04-07 22:13 +2:00", "Sat, 29 Feb 2020 01:02:03 +1400", "1112911993", "@1112911993",
    "2005-13-07 10:00", "07-04-2005 10:00", "2005/04/07 10:00:00 -0000", "@-5 +0000",
    "@99999999999999999999999 +0000", "2005-04-07 12:00 AM", "noon 2005-04-07 T9",
]


def _mutations(rng: random.Random, n: int) -> Iterator[str]:
    alphabet = "0123456789 :-+./,TZapmAPMESTUC@\n"
    for _ in range(n):
        s = list(rng.choice(CASES))
        for _ in range(rng.randrange(1, 4)):
            k = rng.randrange(len(s) + 1)
            s[k:k + rng.randrange(2)] = rng.choice(alphabet)
        yield "".join(s).lstrip("\n") or "x"


def _ours(date: str) -> str:
    try:
        ts, off = parse_date(date)
    except ReftableError as e:
        return f"fatal: {e}"
    sign = "-" if off < 0 else "+"
    return f"{ts} {sign}{abs(off) // 60:02d}{abs(off) % 60:02d}"


def _git(git: GitRunner, date: str, tz: str) -> str:
    r = git.run(["var", "GIT_COMMITTER_IDENT"], check=False,
                env={"GIT_COMMITTER_DATE": date, "TZ": tz})
    if r.returncode:
        return r.stderr.decode().strip()
    return " ".join(r.stdout.decode().split()[-2:])


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_parse_date_matches_git(git: GitRunner, monkeypatch: pytest.MonkeyPatch,
                                tz: str) -> None:
    dates = CASES + list(_mutations(random.Random(tz), 25))
    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        got = {d: _ours(d) for d in dates}
    finally:
        monkeypatch.undo()
        time.tzset()
    want = {d: _git(git, d, tz) for d in dates}
    assert got == want

"""refname: git's format check and the safety check, every refname_safety value."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from reftable_core import counters
from reftable_core.errors import RefnameError
from reftable_core.flags import REFNAME_SAFETY, Flags
from reftable_core.refs.refname import (REFNAME_ALLOW_ONELEVEL, REFNAME_REFSPEC_PATTERN,
                                   check_refname_format, check_refname_format_slow,
                                   make_name_checker, make_names_checker, names_well_formed,
                                   normalize_path_copy, refname_is_safe_normalize,
                                   refname_is_safe_scan)

# (name, valid with flags=0, valid with ALLOW_ONELEVEL), mostly from git's t1402
FORMAT_CASES = [
    (b"refs/heads/main", True, True),
    (b"heads/foo", True, True),
    (b"foo", False, True),
    (b"HEAD", False, True),
    (b"", False, False),
    (b"/", False, False),
    (b"foo/", False, False),
    (b"/heads/foo", False, False),
    (b"heads//foo", False, False),
    (b"./foo", False, False),
    (b".refs/foo", False, False),
    (b"heads/foo..bar", False, False),
    (b"heads/foo.", False, False),
    (b"heads/.foo", False, False),
    (b"heads/foo.lock", False, False),
    (b"heads/foo.lock/bar", False, False),
    (b"heads/foo.locker", True, True),
    (b"heads/foo.bar", True, True),
    (b"heads/foo@bar", True, True),
    (b"heads/foo@{bar", False, False),
    (b"heads/@{foo", False, False),
    (b"@", False, False),
    (b"@/x", True, True),
    (b"heads/foo?bar", False, False),
    (b"heads/foo bar", False, False),
    (b"heads/foo\tbar", False, False),
    (b"heads/foo\x7f", False, False),
    (b"heads/foo\rbar", False, False),
    (b"heads/foo~1", False, False),
    (b"heads/foo^", False, False),
    (b"heads/foo:bar", False, False),
    (b"heads/foo[", False, False),
    (b"heads/foo\\bar", False, False),
    (b"heads/*", False, False),
    (b"heads/\xc3\xa9t\xc3\xa9", True, True),
    (b"heads/{}", True, True),
]


@pytest.mark.parametrize("name,valid,valid_onelevel", FORMAT_CASES)
def test_format_cases(name: bytes, valid: bool, valid_onelevel: bool) -> None:
    assert check_refname_format(name) is valid
    assert check_refname_format(name, REFNAME_ALLOW_ONELEVEL) is valid_onelevel
    assert check_refname_format_slow(name) is valid
    assert check_refname_format_slow(name, REFNAME_ALLOW_ONELEVEL) is valid_onelevel


def test_refspec_pattern() -> None:
    assert check_refname_format(b"refs/heads/*", REFNAME_REFSPEC_PATTERN)
    assert check_refname_format(b"refs/heads/foo*", REFNAME_REFSPEC_PATTERN)
    assert not check_refname_format(b"refs/*/*", REFNAME_REFSPEC_PATTERN)
    assert not check_refname_format(b"refs/heads/*?", REFNAME_REFSPEC_PATTERN)
    assert not check_refname_format(b"refs/heads/*", 0)


_ALPHABET = st.sampled_from([b"a", b"b", b"Z", b"_", b".", b"/", b"@", b"{", b"*", b"-", b"lock",
                             b" ", b"\r", b"~", b"\xc3", b"refs/", b".lock", b"..",
                             b"\x00", b"\x7f", b"[", b":"])


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(_ALPHABET, max_size=10), flags=st.sampled_from([0, 1, 2, 3]))
def test_format_matches_oracle(parts: list[bytes], flags: int) -> None:
    name = b"".join(parts)
    assert check_refname_format(name, flags) == check_refname_format_slow(name, flags)


SAFETY_CASES = [
    (b"refs/heads/main", True),
    (b"refs/heads/../main", False),       # not normalized (git today)
    (b"refs/../foo", False),
    (b"refs/foo/../../bar", False),
    (b"refs/", False),
    (b"refs//x", False),
    (b"refs/x/", False),
    (b"refs/./x", False),
    (b"refs/x/.", False),
    (b"refs/...", True),
    (b"refs/heads/x\r", True),            # badly formed, but does not escape
    (b"refs/heads/a.lock", True),
    (b"HEAD", True),
    (b"FETCH_HEAD", True),
    (b"foo", False),
    (b"Head", False),
    (b"", False),
    (b"../../config", False),
]


@pytest.mark.parametrize("name,safe", SAFETY_CASES)
def test_safety_cases(name: bytes, safe: bool) -> None:
    assert refname_is_safe_normalize(name) is safe
    assert refname_is_safe_scan(name) is safe


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.sampled_from([b"a", b".", b"..", b"/", b"b", b"A", b"_"]), max_size=10))
def test_safety_variants_agree(parts: list[bytes]) -> None:
    for name in (b"".join(parts), b"refs/" + b"".join(parts)):
        assert refname_is_safe_normalize(name) == refname_is_safe_scan(name)


def test_normalize_path_copy() -> None:
    assert normalize_path_copy(b"a/./b") == b"a/b"
    assert normalize_path_copy(b"a//b") == b"a/b"
    assert normalize_path_copy(b"a/../b") == b"b"
    assert normalize_path_copy(b"../a") is None
    assert normalize_path_copy(b"a/../..") is None


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_ALPHABET, max_size=8))
def test_name_checkers_agree(parts: list[bytes]) -> None:
    name = b"".join(parts)
    outcomes = []
    for mode in REFNAME_SAFETY:
        check = make_name_checker(Flags(refname_safety=mode))
        try:
            outcomes.append(check(name))
        except RefnameError:
            outcomes.append("dangerous")
    assert len(set(outcomes)) == 1, (name, outcomes)


@pytest.mark.parametrize("mode", REFNAME_SAFETY)
def test_name_checker_outcomes(mode: str) -> None:
    check = make_name_checker(Flags(refname_safety=mode))
    assert check(b"refs/heads/main") is True
    assert check(b"refs/heads/x\r") is False               # broken, kept
    with pytest.raises(RefnameError, match="dangerous"):
        check(b"refs/heads/../../config")
    with pytest.raises(RefnameError):
        check(b"")


# -- the batch check (packed-refs walks) ----------------------------------------------

# the Cython build checks a batch name by name in C (scripts/cython_rewrites.py)
_CYTHON = os.environ.get("REFTABLE_LAB_CORE") == "cython"


def _good(name: bytes) -> bool:
    return check_refname_format(name, REFNAME_ALLOW_ONELEVEL)


def test_batch_check_cases() -> None:
    good = [n for n, _, ok in FORMAT_CASES if ok]
    assert names_well_formed(good) and names_well_formed([]) and names_well_formed([b"@/x"])
    for name, _, ok in FORMAT_CASES:
        assert names_well_formed(good + [name]) is ok, name
        assert names_well_formed([name] + good) is ok, name
    # "./" is allowed (a component may end in "." when another follows): the interpreted
    # batch check does not say so, and each name is checked then; the Cython build's
    # (git's check_refname_format per name, in C: crefname.pxd) does
    assert _good(b"refs/heads/a./b")
    assert names_well_formed([b"refs/heads/a./b"]) is _CYTHON


@settings(max_examples=600, deadline=None)
@given(names=st.lists(st.lists(_ALPHABET, max_size=8).map(b"".join), max_size=5))
def test_batch_check_matches_each_check(names: list[bytes]) -> None:
    """True only when every name is good; and when they are (no "./"), True."""
    every = all(map(_good, names))
    if _CYTHON:                                  # each name checked as git does: exact
        assert names_well_formed(names) is every, names
    elif names_well_formed(names):
        assert every
    elif every:
        assert any(b"./" in n for n in names), names


@pytest.mark.parametrize("mode", REFNAME_SAFETY)
def test_batch_checker_does_the_variants_work(mode: str) -> None:
    """The batch form of each refname_safety variant: the format check in bulk,
    and, before v2 8/9 (normalize, escape_scan), the safety check of every name
    as the per-name checker does it."""
    names = [b"refs/heads/a", b"refs/heads/b.c", b"refs/tags/v1.0", b"HEAD"]
    batch, each = make_names_checker(Flags(refname_safety=mode)), make_name_checker(
        Flags(refname_safety=mode))
    counters.reset()
    assert batch(names)
    by_batch = counters.snapshot()
    counters.reset()
    assert all(each(n) for n in names)
    by_name = counters.snapshot()
    for key in ("refname_escape_scans", "refname_normalized"):
        assert by_batch[key] == by_name[key], key
    expected = {"normalize": "refname_normalized", "escape_scan": "refname_escape_scans"}
    if mode in expected:
        assert by_batch[expected[mode]] >= 3        # refs/... names (HEAD needs no copy)
    assert not batch(names + [b"refs/heads/x\r"])   # one broken: check each one then

"""--sort keys and git's comparison (ref-filter.c parse_ref_sorting, cmp_ref_sorting,
compare_refs; versioncmp.c).

Contract:
  SortKey(atom, reverse, version, icase)   one parsed key: the index of its atom in
      the RefFormat's used-atom table (sort atoms share it, as in git).
  parse_sort_keys(fmt, keys, icase) -> list[SortKey]   keys in the order given; the
      result is primary first (the last key given sorts first, as git links them);
      "-" reverses, "version:"/"v:" compares by versioncmp; a bad atom dies as in a
      format.
  versioncmp(a, b, suffixes) -> int   versioncmp.c, with versionsort.suffix's values.
  compare(keys, suffixes, a, b, va, vb) -> int   compare_refs: each key in turn
      (numbers for atoms with a number, bytes otherwise, casefolded with icase),
      then the refname (strcasecmp with the primary key's icase).
  sort_refs(keys, suffixes, refs, values) -> order   git_qsort_s (a merge sort) of
      the indexes; first_failing(...) the index of the first failing ref it reaches.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from ..gitlike import Die
from .atom import AtomValue, RefItem
from .format import RefFormat


class SortKey:
    __slots__ = ("atom", "icase", "reverse", "version")

    def __init__(self, atom: int, reverse: bool, version: bool, icase: bool) -> None:
        self.atom = atom
        self.reverse = reverse
        self.version = version
        self.icase = icase


def parse_sort_keys(fmt: RefFormat, keys: list[str], icase: bool) -> list[SortKey]:
    out: list[SortKey] = []
    for key in keys:
        reverse = key.startswith("-")
        k = key[1:] if reverse else key
        version = False
        for pre in ("version:", "v:"):
            if k.startswith(pre):
                k = k[len(pre):]
                version = True
                break
        known = len(fmt.used)
        index = fmt.add_atom(k)
        if index >= known:
            _uncounted(fmt, index)
        out.insert(0, SortKey(index, reverse, version, icase))
    return out


def _uncounted(fmt: RefFormat, index: int) -> None:
    """git's parse_sorting_atom parses into a dummy ref_format: an ahead-behind or
    is-base key's commit is looked up, but only the format's own atoms of that kind are
    counted (filter_ahead_behind, filter_is_base). With none in the format, the key is
    "" on every ref. (With some, git reads past their counts: undefined, a crash here;
    the lab counts the key.)"""
    atom = fmt.used[index].atom
    if hasattr(atom, "counted") and not any(type(u.atom) is type(atom)
                                            for u in fmt.used[:fmt.format_atoms]):
        atom.counted = False


_S_N, _S_I, _S_F, _S_Z = 0, 3, 6, 9
_CMP, _LEN = 2, 3
_NEXT = (_S_N, _S_I, _S_Z, _S_N, _S_I, _S_I, _S_N, _S_F, _S_F, _S_N, _S_F, _S_Z)
_RESULT = (_CMP, _CMP, _CMP, _CMP, _LEN, _CMP, _CMP, _CMP, _CMP,
           _CMP, -1, -1, +1, _LEN, _LEN, +1, _LEN, _LEN,
           _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP, _CMP,
           _CMP, +1, +1, -1, _CMP, _CMP, -1, _CMP, _CMP)


def _digit(c: int) -> bool:
    return 48 <= c <= 57


def _cls(c: int) -> int:
    return (c == 48) + _digit(c)


def _better(tag: bytes, suffix: bytes, start: int, pos: int, match: list[int]) -> None:
    """find_better_matching_suffix; match = [conf_pos, start, len]."""
    end = match[1] if match[2] < len(suffix) else match[1] - 1
    for i in range(start, end + 1):
        if tag.startswith(suffix, i):
            match[0], match[1], match[2] = pos, i, len(suffix)
            break


def _swap_prereleases(s1: bytes, s2: bytes, off: int, suffixes: list[bytes]) -> int | None:
    m1 = [-1, off, -1]
    m2 = [-1, off, -1]
    for i, suf in enumerate(suffixes):
        start = off - len(suf) if len(suf) < off else 0
        _better(s1, suf, start, i, m1)
        _better(s2, suf, start, i, m2)
    if m1[0] == -1 and m2[0] == -1:
        return None
    if m1[0] == m2[0]:
        return None
    if m1[0] >= 0 and m2[0] >= 0:
        return m1[0] - m2[0]
    return -1 if m1[0] >= 0 else 1


def versioncmp(s1: bytes, s2: bytes, suffixes: list[bytes]) -> int:
    """versioncmp.c versioncmp (C strings: a NUL ends them)."""
    a = s1 + b"\0"
    b = s2 + b"\0"
    i = 0
    c1, c2 = a[0], b[0]
    state = _S_N + _cls(c1)
    while True:
        diff = c1 - c2
        if diff != 0:
            break
        if c1 == 0:
            return 0
        state = _NEXT[state]
        i += 1
        c1, c2 = a[i], b[i]
        state += _cls(c1)
    if suffixes:
        d = _swap_prereleases(s1, s2, i, suffixes)
        if d is not None:
            return d
    r = _RESULT[state * 3 + _cls(c2)] if state * 3 + _cls(c2) < len(_RESULT) else _CMP
    if r == _CMP:
        return diff
    if r == _LEN:
        j = i + 1
        k = i + 1
        while _digit(a[j]):
            j += 1
            if not _digit(b[k]):
                return 1
            k += 1
        return -1 if _digit(b[k]) else diff
    return r


def _casecmp(a: bytes, b: bytes) -> int:
    la, lb = a.lower(), b.lower()
    return (la > lb) - (la < lb)


def _key_cmp(k: SortKey, suffixes: list[bytes], va: AtomValue, vb: AtomValue) -> int:
    if k.version:
        c = versioncmp(va.text, vb.text, suffixes)
    elif va.number is not None or vb.number is not None:
        x, y = va.number or 0, vb.number or 0
        c = (x > y) - (x < y)
    elif k.icase:
        c = _casecmp(va.text, vb.text)
    else:
        c = (va.text > vb.text) - (va.text < vb.text)
    return -c if k.reverse else c


def compare(keys: list[SortKey], suffixes: list[bytes], a: RefItem, b: RefItem,
            va: list[AtomValue], vb: list[AtomValue]) -> int:
    """compare_refs."""
    for k in keys:
        c = _key_cmp(k, suffixes, va[k.atom], vb[k.atom])
        if c:
            return c
    if keys and keys[0].icase:
        return _casecmp(a.name, b.name)
    return (a.name > b.name) - (a.name < b.name)


def _merge_sort(idx: list[int], cmp: Callable[[int, int], int]) -> list[int]:
    """compat/qsort_s.c msort_with_tmp's order of comparisons."""
    if len(idx) <= 1:
        return idx
    n1 = len(idx) // 2
    b1 = _merge_sort(idx[:n1], cmp)
    b2 = _merge_sort(idx[n1:], cmp)
    out: list[int] = []
    i = j = 0
    while i < len(b1) and j < len(b2):
        if cmp(b1[i], b2[j]) <= 0:
            out.append(b1[i])
            i += 1
        else:
            out.append(b2[j])
            j += 1
    out.extend(b1[i:])
    out.extend(b2[j:])
    return out


def sort_refs(keys: list[SortKey], suffixes: list[bytes], refs: list[RefItem],
              values: list[list[AtomValue]]) -> list[int]:
    """The sorted order of refs (git's merge sort is stable: so is Python's sort)."""
    n = len(refs)
    if len(keys) == 1 and not (keys[0].reverse or keys[0].version or keys[0].icase) \
            and values and _is_refname(values, refs, keys[0].atom):
        return sorted(range(n), key=lambda i: refs[i].name)

    def cmp(i: int, j: int) -> int:
        return compare(keys, suffixes, refs[i], refs[j], values[i], values[j])

    return sorted(range(n), key=functools.cmp_to_key(cmp))


def _is_refname(values: list[list[AtomValue]], refs: list[RefItem], atom: int) -> bool:
    """Does the key's value equal the refname (plain %(refname)) for every ref?"""
    return all(v[atom].text == r.name for v, r in zip(values, refs))


class _Found(Exception):
    def __init__(self, index: int) -> None:
        self.index = index


def first_failing(keys: list[SortKey], suffixes: list[bytes], refs: list[RefItem],
                  values: list[list[AtomValue] | None], failed: Iterable[int]) -> int:
    """The first index of failed that git's sort populates: git_qsort_s over refs in
    iteration order, compare_refs populating a, then b; a single ref is populated
    when printed."""
    bad = set(failed)
    if len(refs) < 2:
        return min(bad)

    def cmp(a: int, b: int) -> int:
        for i in (a, b):
            if i in bad:
                raise _Found(i)
        va, vb = values[a], values[b]
        if va is None or vb is None:
            raise Die("BUG: a value was not populated")
        return compare(keys, suffixes, refs[a], refs[b], va, vb)

    try:
        _merge_sort(list(range(len(refs))), cmp)
    except _Found as f:
        return f.index
    return min(bad)

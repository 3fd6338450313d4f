"""Seed 001's published figures, unreproduced items and real-C recipes (data for
lab.scenarios' packed-refs scenarios): the packed-refs reading series of 2015 (git.git
3446a59b39..a337292675, v2.5.0-rc0)."""
from __future__ import annotations

from .c_recipes import OLD_BUILD, CRecipe, Recipe

# Seed 001's steps ("git rev-parse refs/heads/does-not-exist" with a 1.6 GB packed-refs of
# ~13M refs: it loads every line, as show-ref --verify does under packed_lookup=parse_all;
# v2 9/9 unless said). The lab's getc_unlocked reader takes no strbuf_grow per
# character, so its row spans 1/9 (getc), 3/9 (getc_unlocked) and 6/9 (grow).
SEED_001_STEPS = (
    ("packed_reader: fgetc -> getc_unlocked (packed_lookup=parse_all)",
     "packed_reader=fgetc", "packed_reader=getc_unlocked"),
    ("packed_reader: getc_unlocked -> getdelim (packed_lookup=parse_all)",
     "packed_reader=getc_unlocked", "packed_reader=getdelim"),
    ("the v2 series (all-off -> packed_reader=getdelim, packed_lookup=parse_all)",
     "all-off", "packed_reader=getdelim"),
)
SEED_001_READERS = {
    "packed_reader: fgetc -> getc_unlocked (packed_lookup=parse_all)":
        "19.383 s -> 8.601 s (2.25x: 1/9 getc 2.5%, 3/9 getc_unlocked 42%, 6/9 no "
        "strbuf_grow per character 21%)",
    "packed_reader: getc_unlocked -> getdelim (packed_lookup=parse_all)":
        "8.601 s -> 6.768 s (1.27x; 7/9 getdelim)",
    "the v2 series (all-off -> packed_reader=getdelim, packed_lookup=parse_all)":
        "19.432 s -> 5.703 s (3.41x; the v2 cover letter: readers and 8/9 skip_sane)",
}
SEED_001_REFNAMES = {
    "refname_safety: normalize -> escape_scan": "8.910 s -> 8.529 s (1.04x; v1 6/6)",
    "refname_safety: normalize -> skip_sane":
        "6.768 s -> 5.703 s (1.19x: v2 8/9, from 7/9's figure and the cover letter's final)",
}
# Seed 001 in git.git (v2, 2015-04-16, v2.5.0-rc0): 1/9 3446a59b39 (getc) on 2dfb2e07cb,
# f43cce23ad (unlocked fallbacks), 3/9 82912d1de8 (getc_unlocked), 260d408e32 (config),
# fec501dae8 (strbuf_addch), 6/9 f80c153bea (no strbuf_grow), 7/9 0cc30e0e84 (getdelim),
# 8/9 03afcbee9b (skip sane refs), 9/9 a337292675 (a test): the files backend, so each
# row's trees are the series' own commits.
# 0cc30e0e84's getdelim reader tests `errno == ENOMEM` after getdelim returns -1, but
# getdelim sets errno only on an error, not at the end of the file: a stale ENOMEM from an
# earlier call made the 2015 trees die "fatal: Out of memory, getdelim failed". git's fix,
# 642956cf45 (2017: errno = 0 before getdelim), is picked on every tree that has getdelim
# (the trees before 7/9 have no getdelim call: nothing to fix, and the pick does not apply).
_GETDELIM_ERRNO_FIX = "cherry-pick 642956cf45"
_GETDELIM_ERRNO_NOTE = ("the getdelim tree with 642956cf45 (2017, errno cleared before "
                        "getdelim) picked: without it a stale errno killed it")
SEED_001_C = {
    "packed_reader: fgetc -> getc_unlocked (packed_lookup=parse_all)": CRecipe(
        Recipe("3446a59b39~1"), Recipe("f80c153bea"),
        "seed 001 v2 1/9..6/9 (3446a59b39..f80c153bea; 4/9 260d408e32 is config reading, "
        f"5/9 fec501dae8 strbuf_addch): the lab's getc_unlocked row spans them; {OLD_BUILD}"),
    "packed_reader: getc_unlocked -> getdelim (packed_lookup=parse_all)": CRecipe(
        Recipe("0cc30e0e84~1"), Recipe("0cc30e0e84", (_GETDELIM_ERRNO_FIX,)),
        f"seed 001 v2 7/9 (getdelim) and its parent 6/9; {_GETDELIM_ERRNO_NOTE}; "
        f"{OLD_BUILD}"),
    "the v2 series (all-off -> packed_reader=getdelim, packed_lookup=parse_all)": CRecipe(
        Recipe("3446a59b39~1"), Recipe("a337292675", (_GETDELIM_ERRNO_FIX,)),
        f"seed 001 v2 1/9's parent and 9/9 (the whole series, 8/9 skip_sane in); "
        f"{_GETDELIM_ERRNO_NOTE}; {OLD_BUILD}"),
}
_NO_GIT_PEER = "packed-load has no git peer (the lab's and dulwich's parse only)"
SEED_001_NO_C = {
    "refname_safety: normalize -> escape_scan":
        f"{_NO_GIT_PEER}; and v1 6/6 (refname_is_safe without "
        "normalize_path_copy) never landed in git.git: v2 replaced it by 8/9",
    "refname_safety: normalize -> skip_sane":
        f"{_NO_GIT_PEER}; 8/9 03afcbee9b's C is in packed-verify-missing's "
        "v2-series row",
}
SEED_001_QUICK_LIST_NO_C = (
    "the figure is git-quick-list, the thread's out-of-tree tool (mmap + binary search), "
    "over linux's 218M packed-refs: no git.git commit is it; git's own mmap + bsearch of "
    "packed-refs (mh/mmap-packed-refs, merged by 1a2e1a76ec, 2017) is a later design")
SEED_001_UNREPRODUCED = {
    "1/9 fgetc -> getc alone (2.5%)": "a C macro against a function call: Python has one "
                                      "call; the lab's fgetc -> getc_unlocked row spans it",
    "6/9 strbuf_grow per character alone (21%)": "the lab's getc_unlocked reader builds no "
                                                 "strbuf; its row spans 3/9 and 6/9",
    "4/9 config reading with getc_unlocked (47%)": "config reading is not a lab workload",
}

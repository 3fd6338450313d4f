"""The lab's scenarios: each reproduces one seed thread's benchmark.

Contract: a Scenario names a data_gen preset (with parameters per scale), a
workload (a key of lab.workloads.WORKLOADS, timed by lab.workloads.build), the
flag variants to time, the peers to time beside them (real git, dulwich, our
CLI: also workloads, so every number comes from the same machinery), the
comparisons to report as ratios, and the seed's published figures.
SCENARIOS is the one registry: every scenario is listed in this module, and
importing it has no other effect. The Scenario type itself is lab.scenario's.
"""
from __future__ import annotations

from collections.abc import Iterable

from .c_recipes import SEED_004_C, CRecipe, Recipe, commit_and_parent, picks
from .scenario import WORK_OF_FLAG, DatasetRef, Scenario, Variant, grid, registry, studied_counters
from .seed_001 import (SEED_001_C, SEED_001_NO_C, SEED_001_QUICK_LIST_NO_C, SEED_001_READERS,
                       SEED_001_REFNAMES, SEED_001_STEPS, SEED_001_UNREPRODUCED)
from .seed_002 import (SEED_002_C, SEED_002_HASHMAP, SEED_002_LIMITS_NO_C, SEED_002_LRU_16384,
                       SEED_002_PERF, SEED_002_SLOTS, SEED_002_SLOTS_NO_C,
                       SEED_002_UNREPRODUCED)

__all__ = [
    "SCENARIOS",
    "SETS",
    "WORK_OF_FLAG",
    "DatasetRef",
    "Scenario",
    "Variant",
    "expand_names",
    "studied_counters",
]


# -- real C beside the rows (lab.c_recipes) -------------------------------------------
# Each row with a published figure has either a CRecipe (the git.git trees of real C just
# before and with the row's patch, built and run on the row's git peer) or a no_c reason.
# scripts/verify_c_recipes.py applies every recipe in a clone of git.git (each one did,
# cleanly, when recorded). The 2015-2016 trees (seeds 001, 002) are judged, not built,
# to build on today's toolchain (gcc 12+): OLD_BUILD says why.

# -- the scenarios --------------------------------------------------------------------

_REFTABLE_ITER_FLAGS = ("merged_cmp", "same_subiter_skip", "pq_cmp", "single_subiter_bypass",
                        "block_key_swap", "ref_name_alloc")
# the generated loops for the profiled flags: the ref block decoder and the merge
# generator (which inlines the priority queue)
_HOT_ITER = ("lab.profiling:ref_record_loops()", "reftable_core.reftable.merged:merge_function()")
_SHOW_REF_PEERS = (("git", "git_show_ref"), ("reftable-lab-cli", "cli_show_ref"))
# Seed 000 as the series it is: each of 2/7..6/7 switched on on top of the previous ones
# (from all-off: no bypass, git at the time), each step's row carrying that patch's own
# hyperfine figure ("show-ref: single matching ref" out of 1M refs; 4/7 over 3 tables,
# the others over one). pq_cmp is left out of the one-table sequence: its less-than
# never runs there (one sub-iterator: the queue never holds two entries).
_SEED_000_STEPS = {
    "merged_cmp": "180.7 ms -> 162.1 ms (1.11x, 2/7; 1 table)",
    "same_subiter_skip": "162.6 ms -> 156.8 ms (1.04x, 3/7; 1 table)",
    "pq_cmp": "224.4 ms -> 172.9 ms (1.30x, 4/7; 3 tables)",
    "block_key_swap": "155.7 ms -> 150.8 ms (1.03x, 5/7; 1 table)",
    "ref_name_alloc": "150.1 ms -> 148.9 ms (1.01x, 6/7: 'a tiny bit more efficient'; 1 table)",
}
_SEED_000_UNREPRODUCED = {
    "1/7 reftable_record_cmp()": "introduces the comparison 2/7 and 4/7 use; no figure, "
                                 "no behaviour of its own",
    "7/7 table_iter_next() comments": "merges two conditionals ('one branch less'); no "
                                      "figure, and a branch is below what the lab's Python "
                                      "models: no flag",
}


def _seed_000_titles(steps: tuple[str, ...]) -> list[tuple[str, str]]:
    """(flag, row title) of the cumulative rows of `steps`: the first step is the "alone,
    others off" row, the later ones "+X on top of ..."."""
    out, prev = [], "all-off"
    for i, name in enumerate(steps):
        label = f"only-{name}" if i == 0 else "all-off+" + "+".join(steps[:i + 1])
        out.append((name, f"{name} alone, others off" if i == 0 else f"+{name} on top of {prev}"))
        prev = label
    return out


def _seed_000_rows(steps: tuple[str, ...], figures: tuple[str, ...]) -> dict[str, str]:
    """row_published for the cumulative rows of `steps` that carry a figure (`figures`)."""
    return {title: _SEED_000_STEPS[name] for name, title in _seed_000_titles(steps)
            if name in figures}


# Seed 000 in git.git: 1/7 .. 7/7 (2024-02-12), topic ps/reftable-iteration-perf, merged
# by 9f67cbd0a7. Its own commits sit on bc7ee2e5e1, which predates the reftable backend
# (ps/reftable-backend, merged by b4385bf016 three merges earlier): each step tree is
# the merge's first parent 274400998b (master with the backend, without the series)
# with 1/7 .. k/7 cherry-picked, in order. The bypass of the merged iterator
# (f8c1a8e2e1, 2024-03-04) is not in them: the merge loop runs, as at the seed.
_SEED_000_BASE = "274400998b"
_SEED_000_GIT = ("adb5d2cbe9", "a96e9a20f3", "5730a9dccf", "dbe4e8b3fd", "92fa3253c8",
                 "a418a7abef", "c68ca7abd3")
_SEED_000_PATCH = {"merged_cmp": 2, "same_subiter_skip": 3, "pq_cmp": 4, "block_key_swap": 5,
                   "ref_name_alloc": 6}


def _seed_000_tree(k: int) -> Recipe:
    """The tree with seed 000's 1/7 .. k/7 (k = 0: none) on _SEED_000_BASE."""
    return picks(_SEED_000_BASE, _SEED_000_GIT[:k])


def _seed_000_c(steps: tuple[str, ...]) -> dict[str, CRecipe]:
    """c_recipes of the cumulative rows of `steps`, the whole sequence's, and the bypass
    row's (f8c1a8e2e1). A row for k/7 is 1/7..(k-1)/7 -> 1/7..k/7: git's order, so the
    one-table sequence, which leaves pq_cmp out, still has 4/7 in C (its less-than never
    runs over one table); 1/7 (no behaviour) is in every tree but the whole sequence's
    before."""
    where = f"cherry-picked onto {_SEED_000_BASE} (master with the reftable backend, just " \
            "before the series' merge 9f67cbd0a7): the series predates --ref-format=reftable"
    out = {}
    for name, title in _seed_000_titles(steps):
        k = _SEED_000_PATCH[name]
        out[title] = CRecipe(_seed_000_tree(k - 1), _seed_000_tree(k),
                             f"seed 000 {k}/7 {_SEED_000_GIT[k - 1]}: 1/7..{k - 1}/7 -> "
                             f"1/7..{k}/7, {where}")
    last = max(_SEED_000_PATCH[name] for name in steps)
    out[f"the whole sequence ({' then '.join(steps)})"] = CRecipe(
        _seed_000_tree(0), _seed_000_tree(last),
        f"seed 000 1/7..{last}/7 ({_SEED_000_GIT[0]}..{_SEED_000_GIT[last - 1]}), {where}")
    out["single_subiter_bypass alone, others on"] = commit_and_parent(
        "f8c1a8e2e1", "upstream f8c1a8e2e1 (2024-03-04) and its parent, which has the reftable "
        "backend; git then lacks the later flags (decode_key_in_place .. tombstone_"
        "suppression) that the lab's 'others on' has")
    return out


# keys decoded in place (decode_key_in_place, upstream daf4f43d0d) leave block_key_swap
# no buffer to swap: it is compared "others on" with keys assembled in a second buffer,
# as git did at seed 000
_KEY_SWAP_BASE = {"block_key_swap": "decode_key_in_place=off"}
_SEED_000_1TABLE = ("merged_cmp", "same_subiter_skip", "block_key_swap", "ref_name_alloc")
_SEED_000_3TABLES = ("merged_cmp", "same_subiter_skip", "pq_cmp", "block_key_swap",
                     "ref_name_alloc")


# Seed 004's figures per refcount N (v1; `git update-ref --stdin` creating N refs in an
# otherwise empty repository, hyperfine means): 3/4 stat_cache on top of the code before
# the series, then 4/4 mmap on top of 3/4; the cover letter's ~2.7x is both together.
_SEED_004 = {
    1: ("5.6 ms -> 5.7 ms (0.98x: no change, 1.01 +- 0.09; refcount = 1)",
        "5.6 ms -> 5.5 ms (1.02x: no change, 1.01 +- 0.06; refcount = 1)",
        "5.6 ms -> 5.5 ms (1.02x; refcount = 1)"),
    100: ("19.2 ms -> 15.2 ms (1.26x; refcount = 100)",
          "15.1 ms -> 10.4 ms (1.45x; refcount = 100)",
          "19.2 ms -> 10.4 ms (1.85x; refcount = 100)"),
    10_000: ("1.310 s -> 916.1 ms (1.43x; refcount = 10000)",
             "919.4 ms -> 483.5 ms (1.90x; refcount = 10000)",
             "1.310 s -> 483.5 ms (2.71x, the cover letter's ~2.7x; refcount = 10000)"),
}


# Seed 004 in git.git: 3/4 6fdfaf15a0 (stat cache), 4/4 718a93ecc0 (mmap), 2024-01-11, and
# the topic's follow-up 4f36b8597c ("fix race in up-to-date check", rewrote the stat
# cache), all in git 2.44, before the reftable backend: the trees are reverts on
# b4385bf016, the merge of ps/reftable-backend (v2.44.0 + the backend; the first commit
# with both). 4f36b8597c is reverted in all three, so that each row's trees differ by the
# seed's patch as posted (its v1 figures). On v2.45.0 the revert of 4f36b8597c conflicts
# (reftable/system.h); on b4385bf016 every revert applies.
def _update_ref_create(n: int) -> Scenario:
    stat_cache, mmap, both = _SEED_004[n]
    return Scenario(
        name=f"update-ref-create-{n}", seed="004",
        description=f"update-ref --stdin: create {n} refs in an otherwise empty repository",
        preset="empty-repo",
        scale_params={"small": {"refs": min(n, 1000), "seed": 0},
                      "full": {"refs": n, "seed": 0}},
        workload="update_ref_create", studied=("stat_cache", "mmap"),
        cumulative=("stat_cache", "mmap"),
        published=f"refcount = {n}: {stat_cache.split(' (')[0]} (3/4 stat_cache), then "
                  f"{mmap.split(' (')[0]} (4/4 mmap)",
        row_published={"stat_cache alone, others off": stat_cache,
                       "+mmap on top of only-stat_cache": mmap,
                       "the whole sequence (stat_cache then mmap)": both},
        c_recipes=SEED_004_C,
        peer_workloads=(("git", "git_update_ref_create"),),
        dataset_keys=("refs", "seed", "object_format"))

def _create_100k(name: str, seed: str, what: str, flag: str, base: str | None,
                 published: str, row_figure: str, recipe: CRecipe) -> Scenario:
    """an update-ref --stdin row creating 100k refs (2000 at the small scale) that studies
    one flag alone, on top of the others on (or of `base`), beside its recipe's git."""
    row = f"{flag} alone, others on" + (f" ({base})" if base else "")
    return Scenario(
        name=name, seed=seed,
        description=f"update-ref --stdin: create 100k refs{what}",
        preset="empty-repo",
        scale_params={"small": {"refs": 2000, "seed": 0}, "full": {"refs": 100_000, "seed": 0}},
        workload="update_ref_create", studied=(flag,),
        flag_base={flag: base} if base else {},
        published=published, row_published={row: row_figure}, c_recipes={row: recipe},
        peer_workloads=(("git", "git_update_ref_create"),),
        dataset_keys=("refs", "seed", "object_format"))



# The cache limits the variants use, per scale (extra variants name them as {limit_*}).
# working_set: the peak bytes of the walks' bases with nothing evicted (log --raw, log -S):
# measured at the small scale (0.24 MB, 1.8 MB; tests/lab/test_work_counters.py checks
# it), ~12-40 MB at the full scale. Every limit below its lower end evicts in both walks;
# limit_4 and limit_5 are above its upper end: the sweep's plateau, where nothing is.
_ODB_SCALES = {"small": {"commits": 150, "files": 300, "seed": 0,
                         "working_set": ["115k", "900k"],
                         "limit_lo": "16k", "limit_hi": "64k",
                         "limit_1": "8k", "limit_2": "16k", "limit_3": "64k",
                         "limit_4": "4m", "limit_5": "16m"},
               "full": {"commits": 3000, "files": 2000, "seed": 0,
                        "working_set": ["12m", "40m"],
                        "limit_lo": "4m", "limit_hi": "8m",
                        "limit_1": "1m", "limit_2": "4m", "limit_3": "8m",
                        "limit_4": "96m", "limit_5": "512m"}}
_PLATEAU = "the limit is above the walk's working set: nothing is evicted, as at all-on's 96m"
_ODB_HOT = ("reftable_core.odb.delta_cache:HashmapCache.add",
            "reftable_core.odb.delta_cache:FixedSlotCache.add")
_ODB_KEYS = ("commits", "files", "seed", "object_format")
_ODB_WALKS = (("log-raw", "odb_log_raw"), ("log-S", "odb_log_S"))


# upstream 146a946321 (2026-07-10): t/perf/p1401-ref-store-tombstones.sh. The lab scans
# a tombstone in some 20 us (git: about 1 us) and all-off scans 2 N^2 of them (read_ref
# of the deleted name, the D/F check's read of "refs/tags" and its seek past
# "refs/tags/<name>/" each run through every later tombstone), so the small scale is
# N = 50 (a few seconds per variant under callgrind) and the full one N = 2,000 (p1401
# itself: 8,000, some 45 minutes per all-off run here).
_P1401_SCALES = {"small": {"refs": 50, "seed": 0}, "full": {"refs": 2000, "seed": 0}}
_P1401_PUBLISHED = ("p1401 both tests ~13 s -> ~0.2 s at 8,000 tags; \"~15 s for 8,000 refs, "
                    "quadrupling for each doubling\" (146a946321)")


def _p1401(name: str, what: str, formats: dict[str, str]) -> Scenario:
    return Scenario(
        name=name, seed="146a946321",
        description=f"p1401: {what}; timed: create the N tags (update-ref --stdin) and "
                    "delete them again (for-each-ref | update-ref --stdin) on a stack "
                    "holding N tombstones",
        preset="empty-repo",
        scale_params={scale: {**params, **formats} for scale, params in _P1401_SCALES.items()},
        workload="p1401_recreate", studied=("tombstone_suppression",),
        published=_P1401_PUBLISHED,
        row_published={"tombstone_suppression alone, others on":
                       "~13 s -> ~0.2 s (8,000 tags, git 146a946321)"},
        c_recipes={"tombstone_suppression alone, others on": commit_and_parent(
            "146a946321", "upstream 146a946321 (2026-07-10) and its parent")},
        peer_workloads=(("git", "git_p1401_recreate"),),
        dataset_keys=("refs", "seed", "object_format"))


# upstream e4929cdf79 (2024-11-20): `git refs migrate` of 100k refs, hyperfine (the
# commit message). The lab's datasets: packed-1m (files, every ref packed, no reflog)
# to reftable, refs-1m-1table without reflogs (git 2.47 refuses to migrate reflogs) to
# files. git just before e4929cdf79 already migrates through an initial transaction
# (00bd6c3e46); the provisioned git peer (2.47) predates both: a normal transaction,
# every ref written loose by the files backend.
_MIGRATE = {
    "reftable": ("packed-1m", "files -> reftable",
                 "472.4 ms -> 86.1 ms (5.48x; 100k refs, files -> reftable)"),
    "files": ("refs-1m-1table", "reftable -> files",
              "452.7 ms -> 95.2 ms (4.76x; 100k refs, reftable -> files)"),
}


# git just before d94ac23d3b (2024-11-20) predates iterator_reuse (7cf65e2660,
# 2024-11-26, another branch), block_type_early_exit (1970333644, 2025-05) and
# tombstone_suppression (146a946321); git just before 66ed011bf7 (its parent series,
# the same day) predates d94ac23d3b too, and so on back: e4929cdf79, then 00bd6c3e46
_BEFORE_D94AC23D3B = "iterator_reuse=off,block_type_early_exit=off,tombstone_suppression=off"
_BEFORE_66ED011BF7 = f"{_BEFORE_D94AC23D3B},block_writer_scratch=off"
_BEFORE_E4929CDF79 = f"{_BEFORE_66ED011BF7},writer_scratch=off"
_BEFORE_00BD6C3E46 = f"{_BEFORE_E4929CDF79},initial_transaction_check=off"
_BEFORE_4AF31DC84A = ("restart_key_in_place=off,next_block_in_place=off,seek_in_place=off,"
                      f"{_BEFORE_E4929CDF79}")

# upstream 66ed011bf7 and d94ac23d3b (2024-11-20, the same series, after e4929cdf79): the
# table writer's and the block writer's scratch buffers; their messages give valgrind's
# heap summary of `git refs migrate` of 1M refs, files -> reftable (and, 66ed011bf7,
# hyperfine): (flag, commit, base, figure, recipe note)
_MIGRATE_WRITER = (
    ("writer_scratch", "66ed011bf7", _BEFORE_66ED011BF7,
     "827.2 ms -> 813.6 ms (1.02x); heap 5,032,171 -> 3,025,864 allocs (418.8 MB -> "
     "372.7 MB allocated); 1M refs, files -> reftable",
     "upstream 66ed011bf7 (2024-11-20) and its parent a7004abd0b (e4929cdf79 in)"),
    ("block_writer_scratch", "d94ac23d3b", _BEFORE_D94AC23D3B,
     "heap 3,025,864 -> 2,013,250 allocs (372.7 MB -> 347.5 MB allocated; no time "
     "figure); 1M refs, files -> reftable",
     "upstream d94ac23d3b (2024-11-20) and its parent aa248b8ab2 (a rename of "
     "block_writer::buf; 66ed011bf7 in)"),
)

# upstream 00bd6c3e46 (2024-11-20): refs migrate commits an initial transaction; the
# commit message's hyperfine, reftable -> files only (the reftable backend did not yet
# special-case an initial transaction: "no comparable speedup for that backend")
_MIGRATE_INITIAL = {
    "files": "3.247 s -> 453.6 ms (7.16x; 100k refs, reftable -> files)",
}


def _migrate(to_format: str) -> Scenario:
    preset, way, figure = _MIGRATE[to_format]
    extra = {"reflog": False} if preset == "refs-1m-1table" else {}
    rows = {f"initial_transaction_check alone, others on ({_BEFORE_E4929CDF79})": figure}
    c = {f"initial_transaction_check alone, others on ({_BEFORE_E4929CDF79})": commit_and_parent(
        "e4929cdf79", "upstream e4929cdf79 (2024-11-20) and its parent 00bd6c3e46 (refs "
        "migrate already commits an initial transaction)")}
    studied: tuple[str, ...] = ("initial_transaction_check",)
    base = {"initial_transaction_check": _BEFORE_E4929CDF79}
    if to_format in _MIGRATE_INITIAL:
        studied += ("migrate_initial",)
        base["migrate_initial"] = _BEFORE_00BD6C3E46
        rows[f"migrate_initial alone, others on ({_BEFORE_00BD6C3E46})"] = \
            _MIGRATE_INITIAL[to_format]
        c[f"migrate_initial alone, others on ({_BEFORE_00BD6C3E46})"] = commit_and_parent(
            "00bd6c3e46", "upstream 00bd6c3e46 (2024-11-20) and its parent (git refs "
            "migrate, 2.46, is in both)")
    published, writes = figure, ""
    if to_format == "reftable":                 # the new store's table is written
        for flag, commit, before, text, note in _MIGRATE_WRITER:
            studied += (flag,)
            base[flag] = before
            rows[f"{flag} alone, others on ({before})"] = text
            c[f"{flag} alone, others on ({before})"] = commit_and_parent(commit, note)
        published += ("; heap 5,032,171 -> 3,025,864 (66ed011bf7) -> 2,013,250 allocs "
                      "(d94ac23d3b), 1M refs")
        writes = (", written with a key buffer per record or the writers' kept ones "
                  "(66ed011bf7, d94ac23d3b)")
    return Scenario(
        name=f"migrate-to-{to_format}", seed="e4929cdf79",
        description=f"refs migrate {way}: every ref copied into an empty store in one "
                    "transaction, an initial one (00bd6c3e46) or not, whose refname check "
                    f"reads that store or not (e4929cdf79){writes}",
        preset=preset,
        scale_params={"small": {"refs": 2000, "seed": 0, "to_format": to_format, **extra},
                      "full": {"refs": 100_000, "seed": 0, "to_format": to_format, **extra}},
        workload="migrate_refs", studied=studied,
        flag_base=base,
        published=published,
        row_published=rows,
        c_recipes=c,
        # all off includes migrate_initial=off (git before 00bd6c3e46): refs migrate's
        # transaction is an ordinary one, so there is no initial-transaction check to skip
        same_work={"initial_transaction_check alone, others off":
                   "with migrate_initial=off (git before 00bd6c3e46) refs migrate commits an"
                   " ordinary transaction, whose refname check e4929cdf79 does not change"},
        peer_workloads=(("git", "git_migrate_refs"),),
        dataset_keys=("refs", "seed", "object_format", "reflog"))


def _odb_walk(kind: str, workload: str, published: str) -> Scenario:
    return Scenario(
        name=f"odb-{kind}", seed="002",
        description=f"{kind} over a history packed with --depth=50 (delta base cache)",
        preset="history-depth50", scale_params=_ODB_SCALES, workload=workload,
        studied=("delta_cache_lru", "delta_cache_index"),
        flag_values={"delta_cache_lru": ("blob_first", "single"),
                     "delta_cache_index": ("fixed:256", "fixed:1024", "fixed:4096", "hashmap")},
        # 96m never evicts (at either scale), so the LRU policy is compared at the
        # small limit, where blob_first's whole-list walks (and its upswing with more
        # slots, seed 5/7) show
        flag_base={"delta_cache_lru": "delta_cache_limit={limit_lo}"},
        extra_variants=(("limit={limit_lo}", "delta_cache_limit={limit_lo}"),
                        ("limit={limit_hi}", "delta_cache_limit={limit_hi}"),
                        ("blob_first,fixed:16384,limit={limit_lo}",
                         "delta_cache_lru=blob_first,delta_cache_index=fixed:16384,"
                         "delta_cache_limit={limit_lo}"),
                        ("single,fixed:16384,limit={limit_lo}",
                         "delta_cache_index=fixed:16384,delta_cache_limit={limit_lo}")),
        published=published,
        row_published={"all optimizations (off -> on)": SEED_002_PERF[kind],
                       "delta_cache_index: fixed:256 -> hashmap": SEED_002_HASHMAP[kind]},
        c_recipes=SEED_002_C,
        unreproduced=SEED_002_UNREPRODUCED,
        peer_workloads=(("git", f"git_{workload[4:]}"),)
        + ((("dulwich", "dulwich_log_raw"),) if kind == "log-raw" else ()),
        dataset_keys=_ODB_KEYS, hot=_ODB_HOT)


def _odb_slots(kind: str, workload: str) -> Scenario:
    """Seed 002 5/7: the MAX_DELTA_CACHE sweep (slot counts, per LRU, at small limits)."""
    return Scenario(
        name=f"odb-{kind}-slots", seed="002",
        description=f"{kind}: delta_cache_index=fixed:N slot sweep, blob_first vs single LRU, "
                    f"at two delta_cache_limits that evict (4m and 8m at the full scale)",
        preset="history-depth50", scale_params=_ODB_SCALES, workload=workload, studied=(),
        extra_variants=grid(delta_cache_index=("fixed:256", "fixed:1024", "fixed:4096",
                                                "fixed:16384"),
                             delta_cache_lru=("blob_first", "single"),
                             delta_cache_limit=("{limit_lo}", "{limit_hi}")),
        # small (make bench): the lower limit only; the full scale runs both
        extras_at={"small": tuple(f"{index},{lru},{{limit_lo}}"
                                  for index in ("fixed:256", "fixed:1024", "fixed:4096",
                                                "fixed:16384")
                                  for lru in ("blob_first", "single"))},
        extra_comparisons=tuple(
            (f"slots {a} -> {b}, {lru} LRU (at limit_lo)",
             f"fixed:{a},{lru},{{limit_lo}}", f"fixed:{b},{lru},{{limit_lo}}")
            for lru, a, b in SEED_002_SLOTS[kind])
        + (("16384 slots: LRU blob_first -> single (at limit_lo)",
            "fixed:16384,blob_first,{limit_lo}", "fixed:16384,single,{limit_lo}"),),
        row_published={f"slots {a} -> {b}, {lru} LRU (at limit_lo)": text
                       for (lru, a, b), text in SEED_002_SLOTS[kind].items()}
        | {"16384 slots: LRU blob_first -> single (at limit_lo)":
           SEED_002_LRU_16384[kind]},
        no_c={title: SEED_002_SLOTS_NO_C
              for title in [f"slots {a} -> {b}, {lru} LRU (at limit_lo)"
                            for lru, a, b in SEED_002_SLOTS[kind]]
              + ["16384 slots: LRU blob_first -> single (at limit_lo)"]},
        unreproduced=SEED_002_UNREPRODUCED,
        published="MAX_DELTA_CACHE 256 -> 4096: log -S 12.6 s -> 6.5 s, worse again from 16384 "
                  "(blob_first walks the whole LRU list); single LRU flat (5/7)",
        dataset_keys=_ODB_KEYS, hot=_ODB_HOT)


def _odb_cache_size(kind: str, workload: str) -> Scenario:
    """Seed 002 6/7 and the cover letter: hashmap vs fixed:256 across base cache limits."""
    return Scenario(
        name=f"odb-{kind}-cache-size", seed="002",
        description=f"{kind}: delta base cache limit sweep (1m .. 512m at the full scale), "
                    f"fixed:256 vs hashmap, each with blob_first and single LRU",
        preset="history-depth50", scale_params=_ODB_SCALES, workload=workload, studied=(),
        extra_variants=grid(delta_cache_limit=tuple(f"{{limit_{i}}}" for i in range(1, 6)),
                             delta_cache_index=("fixed:256", "hashmap"),
                             delta_cache_lru=("blob_first", "single")),
        same_work={f"{{limit_{i}}},hashmap,{lru} vs all-on": _PLATEAU
                   for i in (4, 5) for lru in ("single", "blob_first")},
        # small (make bench): the code before the series and after it, at three limits
        extras_at={"small": tuple(f"{{limit_{i}}},{pair}" for i in (1, 3, 5)
                                  for pair in ("fixed:256,blob_first", "hashmap,single"))},
        extra_comparisons=tuple(
            (f"{what}: limit_1 -> limit_3 (8x)", f"{{limit_1}},{pair}",
             f"{{limit_3}},{pair}")
            for what, pair in (("before the series (fixed:256, blob_first)",
                                "fixed:256,blob_first"),
                               ("after it (hashmap, single LRU)", "hashmap,single"))),
        row_published={
            "before the series (fixed:256, blob_first): limit_1 -> limit_3 (8x)":
            "bumping core.deltaBaseCacheLimit 'gets you basically nothing' (cover letter, "
            "linux.git; no figure)",
            "after it (hashmap, single LRU): limit_1 -> limit_3 (8x)":
            "128m -> 1024m: 4m56.486 s -> 3m32.623 s (1.40x; cover letter, linux.git, "
            "log -Sfoo --raw)"} if kind == "log-S" else {},
        no_c={f"{what}: limit_1 -> limit_3 (8x)": SEED_002_LIMITS_NO_C
              for what in ("before the series (fixed:256, blob_first)",
                           "after it (hashmap, single LRU)")} if kind == "log-S" else {},
        unreproduced=SEED_002_UNREPRODUCED,
        published="core.deltaBaseCacheLimit 128m -> 1024m: log -S --raw 4m56 s -> 3m32 s "
                  "(kernel); hashmap lets a bigger limit pay off (6/7)",
        dataset_keys=_ODB_KEYS, hot=_ODB_HOT)


# The 2024-03/04 decoding series (upstream, Patrick Steinhardt; issue 14 item 4). git just
# before it had the seeds' patches but neither iterator_reuse (2024-11),
# block_type_early_exit (2025-05) nor tombstone_suppression (2026-07): each flag's
# "others on" base has those off, and the series' later flags too (daf4f43d0d 2024-03-04,
# d51d8cc368 2024-04-03, then b00bcb7c49 and 9da5c992dd on 2024-04-08, in that order;
# the writers' 2024-11 flags act on no read).
_BEFORE_LATER = "block_type_early_exit=off,iterator_reuse=off,tombstone_suppression=off"
_DECODING_BASE = {
    "decode_key_in_place": f"{_BEFORE_LATER},restart_key_in_place=off,next_block_in_place=off,"
                           "seek_in_place=off",
    "restart_key_in_place": f"{_BEFORE_LATER},next_block_in_place=off,seek_in_place=off",
    "next_block_in_place": f"{_BEFORE_LATER},seek_in_place=off",
    "seek_in_place": _BEFORE_LATER,
}


def _decoding_row(flag: str) -> str:
    return f"{flag} alone, others on ({_DECODING_BASE[flag]})"


_DECODING_SCALES = {"small": {"refs": 20_000, "seed": 0}, "full": {"refs": 1_000_000, "seed": 0}}
# The series' log commits, measured over reflog iteration, and why no flag models them
# (their heap summaries are the published figures; core/reftable_core/flags.py names them).
_DECODING_UNREPRODUCED = {
    "193fcb3ff8 (2024-03-05) reuse refnames when decoding log records: heap 4,068,487 -> "
    "3,068,488 allocs (332.0 MB -> 307.1 MB), 1M reflog entries":
        "git refills the caller's one reftable_log_record, growing its refname array "
        "(REFTABLE_ALLOC_GROW); here every record is a new object with its own immutable "
        "refname (callers keep records: the merge queue, lists), so no buffer outlives a "
        "record to be reused",
    "e0bd13beea (2024-03-05) reuse message when decoding log records: heap 3,068,488 -> "
    "2,068,487 allocs":
        "the same for the message: each record's message is a fresh bytes sliced out of "
        "the block, the one allocation it needs; nothing is reallocated per record",
    "7b8abc4d8c (2024-03-05) scratch buffer when decoding records: heap 2,068,487 -> "
    "1,068,485 allocs (305.1 MB -> 281.1 MB)":
        "git decoded name, email and message into a local strbuf, then copied them out; "
        "the model slices each string straight from the block into the record: there is "
        "no intermediate buffer to keep",
    "dd347bbce6 (2024-04-08) reuse uncompressed blocks: heap 45,755 -> 23,028 allocs "
    "(254.8 MB -> 162.8 MB), git reflog list over 100k reflogs":
        "Python's zlib returns each inflation as a new bytes (it cannot inflate into a "
        "caller's buffer): a kept buffer would add a copy and save no allocation",
    "ce1f213cc9 (2024-04-08) reuse the zstream on inflation: heap 23,028 -> 302 allocs "
    "(162.8 MB -> 88 KB), 1M reflog entries":
        "Python's zlib has no inflateReset: a Decompress object cannot start a new stream "
        "once its stream ended, so each log block needs its own zlib.decompressobj()",
}


SCENARIOS: dict[str, Scenario] = registry([
    Scenario(
        name="show-ref-1table", seed="000",
        description="show-ref: single matching ref over N refs in 1 table",
        preset="refs-1m-1table",
        scale_params={"small": {"refs": 20_000, "seed": 0},
                      "full": {"refs": 1_000_000, "seed": 0}},
        # pq_cmp is studied on 3 tables only: over one table the queue never holds two
        # entries, so its less-than never runs (the work counters show it, bypass or not)
        workload="show_ref",
        studied=tuple(f for f in _REFTABLE_ITER_FLAGS if f != "pq_cmp") + ("mmap",),
        # with single_subiter_bypass on, one table never reaches the merge loop, so the
        # merge flags are compared "others on" with the bypass off (git at seed 000)
        flag_base={**{f: "single_subiter_bypass=off" for f in ("merged_cmp", "same_subiter_skip")},
                   **_KEY_SWAP_BASE},
        cumulative=_SEED_000_1TABLE,
        row_published=_seed_000_rows(_SEED_000_1TABLE, _SEED_000_1TABLE),
        c_recipes=_seed_000_c(_SEED_000_1TABLE),
        unreproduced=_SEED_000_UNREPRODUCED,
        published="1.11x (2/7 merged_cmp), 1.04x (3/7), 1.03x (5/7), 1.01x (6/7), each on "
                  "top of the previous",
        peer_workloads=_SHOW_REF_PEERS, hot=_HOT_ITER),
    Scenario(
        name="show-ref-3tables", seed="000",
        description="show-ref: single matching ref over N refs in 3 tables",
        preset="refs-1m-3tables",
        scale_params={"small": {"refs": 20_000, "tables": 3, "seed": 0},
                      "full": {"refs": 1_000_000, "tables": 3, "seed": 0}},
        workload="show_ref", studied=_REFTABLE_ITER_FLAGS, flag_base=_KEY_SWAP_BASE,
        cumulative=_SEED_000_3TABLES,
        row_published=_seed_000_rows(_SEED_000_3TABLES, ("pq_cmp",)),
        c_recipes=_seed_000_c(_SEED_000_3TABLES),
        published="1.30x (4/7 pq_cmp, 3 tables, on top of 2/7 and 3/7)",
        peer_workloads=_SHOW_REF_PEERS, hot=_HOT_ITER),
    Scenario(
        name="iterate-refs-memory", seed="000",
        description="memory: show-ref iterating every one of N refs in 1 table; run with "
                    "--measure memory for the peak above the interpreter's own",
        preset="refs-1m-1table",
        scale_params={"small": {"refs": 20_000, "seed": 0},
                      "full": {"refs": 1_000_000, "seed": 0}},
        workload="show_ref", studied=("mmap", "ref_name_alloc"),
        published="(no seed figure: the lab's peak-memory scenario)",
        peer_workloads=(("git", "git_show_ref"),), hot=_HOT_ITER),
    Scenario(
        name="show-ref-decoding", seed="daf4f43d0d",
        description="show-ref: single matching ref over N refs in 1 table; the record "
                    "loops decode keys in place (or not) and step into each next block "
                    "themselves (or start anew per block)",
        preset="refs-1m-1table", scale_params=_DECODING_SCALES,
        workload="show_ref", studied=("decode_key_in_place", "next_block_in_place"),
        flag_base={f: _DECODING_BASE[f] for f in ("decode_key_in_place",
                                                  "next_block_in_place")},
        published="112.2 ms -> 106.0 ms (1.06x, daf4f43d0d); heap 7,235 -> 315 allocs "
                  "(b00bcb7c49); show-ref: single matching ref out of 1M refs",
        row_published={
            _decoding_row("decode_key_in_place"):
                "112.2 ms -> 106.0 ms (1.06x; show-ref: single matching ref, 1M refs)",
            _decoding_row("next_block_in_place"):
                "heap 7,235 -> 315 allocs (301,481 -> 107,027 bytes; show-ref: single "
                "matching ref out of 1M refs)"},
        c_recipes={
            _decoding_row("decode_key_in_place"): commit_and_parent(
                "daf4f43d0d", "upstream daf4f43d0d (2024-03-04) and its parent, which has "
                "the reftable backend"),
            _decoding_row("next_block_in_place"): commit_and_parent(
                "b00bcb7c49", "upstream b00bcb7c49 (2024-04-08) and its parent")},
        peer_workloads=(("git", "git_show_ref"),), hot=_HOT_ITER),
    Scenario(
        name="log-iterate", seed="daf4f43d0d",
        description="reflog iteration: every one of N log records (one per ref) of a "
                    "table, through the stack's log iterator",
        preset="refs-1m-1table", scale_params=_DECODING_SCALES,
        workload="log_iterate", studied=("decode_key_in_place", "next_block_in_place"),
        flag_base={f: _DECODING_BASE[f] for f in ("decode_key_in_place",
                                                  "next_block_in_place")},
        published="heap summaries, 1M reflog entries: 4,068,487 -> 3,068,488 (193fcb3ff8) "
                  "-> 2,068,487 (e0bd13beea) -> 1,068,485 allocs (7b8abc4d8c); 45,755 -> "
                  "23,028 (dd347bbce6) -> 302 allocs (ce1f213cc9): no flag, see unreproduced",
        unreproduced=_DECODING_UNREPRODUCED,
        peer_workloads=(("git", "git_reflog_list"),)),
    Scenario(
        name="rev-list-many-refs", seed="9da5c992dd",
        description="the ref reads of rev-list --no-walk <refs>: `show-ref --verify -q` of "
                    "every 10th of N refs in 1 table, each read by name, one seek each "
                    "(each seek a binary search over the restart points of the index and "
                    "ref blocks it reads, then a scan), the same command on both sides",
        preset="refs-1m-1table",
        scale_params={"small": {"refs": 20_000, "seed": 0, "every": 10},
                      "full": {"refs": 100_000, "seed": 0, "every": 10}},
        workload="show_ref_verify_many", studied=("seek_in_place", "restart_key_in_place"),
        flag_base={f: _DECODING_BASE[f] for f in ("seek_in_place", "restart_key_in_place")},
        published="170.2 ms -> 161.6 ms (1.05x, 9da5c992dd; rev-list --no-walk printing "
                  "10k of 100k refs); d51d8cc368 (restart keys compared in place): no "
                  "figure published",
        row_published={
            _decoding_row("seek_in_place"):
                "170.2 ms -> 161.6 ms (1.05x; rev-list: print 10k of 100k refs)",
            _decoding_row("restart_key_in_place"):
                "(no figure published: d51d8cc368 'saves us some allocations', one per "
                "restart point a seek probes, and gives no measurement)"},
        c_recipes={
            _decoding_row("seek_in_place"): commit_and_parent(
                "9da5c992dd", "upstream 9da5c992dd (2024-04-08) and its parent; both sides "
                "run show-ref --verify over the same names (the seeks of rev-list --no-walk "
                "without its commit parsing)"),
            _decoding_row("restart_key_in_place"): commit_and_parent(
                "d51d8cc368", "upstream d51d8cc368 (2024-04-03) and its parent, which has "
                "the reftable backend and daf4f43d0d")},
        peer_workloads=(("git", "git_show_ref_verify_many"),)),
    *(_update_ref_create(n) for n in (1, 100, 10_000)),
    _create_100k("update-ref-create-100k", "003",
                 "; each lookup meets a log block after the ref block",
                 "block_type_early_exit", None, "1.62x (block_type_early_exit)",
                 "1.62x (block_type_early_exit, creating 100k refs)",
                 commit_and_parent("1970333644", "seed 003's fix (2025-05-12) and its parent; "
                                   "git then lacks tombstone_suppression (146a946321), which "
                                   "the lab's 'others on' has")),
    Scenario(
        name="packed-verify-missing", seed="001",
        description="show-ref --verify of a missing ref in a huge packed-refs",
        preset="packed-1m",
        scale_params={
            "small": {"refs": 50_000, "seed": 0, "show_ref_args": ["--verify", "-q"],
                      "probe_kind": "missing", "expect_status": 1},
            "full": {"refs": 1_000_000, "seed": 0, "show_ref_args": ["--verify", "-q"],
                     "probe_kind": "missing", "expect_status": 1}},
        workload="show_ref", studied=("packed_lookup", "packed_reader"),
        flag_values={"packed_lookup": ("parse_all", "bsearch"),
                     "packed_reader": ("fgetc", "getc_unlocked", "getdelim", "mmap")},
        # the readers only run on a full parse (bsearch maps the file): seed 001's
        # reader steps are each measured under packed_lookup=parse_all
        flag_base={"packed_reader": "packed_lookup=parse_all"},
        extra_comparisons=SEED_001_STEPS,
        row_published=SEED_001_READERS,
        c_recipes=SEED_001_C,
        unreproduced=SEED_001_UNREPRODUCED,
        published="19.4 s -> 5.7 s (readers, 13M refs)",
        peer_workloads=(("git", "git_show_ref"), ("reftable-lab-cli", "cli_show_ref"),
                        ("dulwich", "dulwich_show_ref")),
        hot=("reftable_core.refs.packed:_BsearchLookup.get",)),
    Scenario(
        name="packed-prefix-list", seed="001",
        description="for-each-ref over one remote's prefix in a huge packed-refs",
        preset="packed-1m",
        # refs/remotes/nononara/ is the packed-1m preset's largest fork remote (data_gen
        # names, seed 0): 343 of 50k refs (0.7%), 1,594 of 1M (0.16%); the seed's
        # refs/remotes/2325298/ was some 540 refs of a 218M file
        scale_params={
            "small": {"refs": 50_000, "seed": 0, "prefix": "refs/remotes/nononara/",
                      "for_each_ref_args": ["--format=%(objectname) %(refname)"]},
            "full": {"refs": 1_000_000, "seed": 0, "prefix": "refs/remotes/nononara/",
                     "for_each_ref_args": ["--format=%(objectname) %(refname)"]}},
        workload="for_each_ref", studied=("packed_lookup",),
        flag_values={"packed_lookup": ("parse_all", "bsearch")},
        row_published={"packed_lookup: parse_all -> bsearch":
                       "git for-each-ref --format='%(objectname) %(refname)' "
                       "refs/remotes/2325298/ 1.649 s -> git-quick-list 0.012 s "
                       "(218M packed-refs, torvalds/linux)"},
        no_c={"packed_lookup: parse_all -> bsearch": SEED_001_QUICK_LIST_NO_C},
        published="for-each-ref refs/remotes/2325298/: 1.649 s -> 0.012 s (quick-list: mmap + "
                  "binary search)",
        peer_workloads=(("git", "git_for_each_ref"), ("reftable-lab-cli", "cli_for_each_ref")),
        hot=("reftable_core.refs.packed:_BsearchLookup._chunks",
             "reftable_core.refs.packed:_BsearchLookup._usual_rows")),
    Scenario(
        name="packed-load", seed="001",
        description="load every record of a huge packed-refs file, per reader strategy",
        preset="packed-1m",
        scale_params={"small": {"refs": 50_000, "seed": 0},
                      "full": {"refs": 1_000_000, "seed": 0}},
        workload="packed_load", studied=("packed_reader", "refname_safety"),
        flag_values={"packed_reader": ("fgetc", "getc_unlocked", "getdelim", "mmap"),
                     "refname_safety": ("normalize", "escape_scan", "skip_sane")},
        extra_comparisons=(("refname_safety: normalize -> escape_scan",
                            "refname_safety=normalize", "refname_safety=escape_scan"),),
        row_published=SEED_001_REFNAMES,
        no_c=SEED_001_NO_C,
        published="getc 2.5%, unlocked 42%, grow 21%, getdelim 21% (per step)",
        peer_workloads=(("dulwich", "dulwich_packed_load"),),
        hot=("reftable_core.refs.packed_readers:lines_fgetc", "reftable_core.refs.packed:load_lines")),
    _odb_walk("log-raw", "odb_log_raw", "-22.0% (log --raw)"),
    _odb_walk("log-S", "odb_log_S", "-4.7% (log -S)"),
    *(_odb_slots(kind, workload) for kind, workload in _ODB_WALKS),
    *(_odb_cache_size(kind, workload) for kind, workload in _ODB_WALKS),
    _p1401("p1401-recreate", "create N tags, delete them all, recreate them",
           {"old_format": "refs/tags/tag-%d", "new_format": "refs/tags/tag-%d"}),
    _p1401("p1401-recreate-renamed",
           "create N tags old-<i>, delete them all, create new-<i> (other names)",
           {"old_format": "refs/tags/old-%d", "new_format": "refs/tags/new-%d"}),
    # git just before 7cf65e2660 (2024-11-26) predates block_type_early_exit
    # (1970333644, 2025-05), tombstone_suppression (146a946321, 2026-07) and, on another
    # branch, the writers' scratch buffers (66ed011bf7, d94ac23d3b)
    _create_100k("update-ref-create-100k-reuse", "7cf65e2660",
                 "; every queued update reads its ref (a random read), through one kept "
                 "iterator or a new one per read",
                 "iterator_reuse", "block_type_early_exit=off,tombstone_suppression=off,"
                 "writer_scratch=off,block_writer_scratch=off",
                 "1.793 s -> 1.680 s (1.07x); 8,400,426 -> 7,929,872 allocs "
                 "(454.4 MB -> 281.5 MB)",
                 "1.793 s -> 1.680 s (1.07x); heap: 8,400,426 -> 7,929,872 allocs "
                 "(454.4 MB -> 281.5 MB), 100k refs",
                 commit_and_parent("7cf65e2660", "upstream 7cf65e2660 (2024-11-26) and its "
                                   "parent")),
    # git just before 4af31dc84a (2024-04-08) predates the decoding series' last three
    # (d51d8cc368 and b00bcb7c49, 9da5c992dd: another branch), the writers' scratch
    # buffers, iterator_reuse, block_type_early_exit and tombstone_suppression
    _create_100k("update-ref-create-100k-namecheck", "4af31dc84a",
                 " in one transaction; the reftable library checks the new table's refs "
                 "against the stack again, or not",
                 "skip_name_check", _BEFORE_4AF31DC84A,
                 "3.241 s -> 2.878 s (1.13x; 100k refs in one transaction)",
                 "3.241 s -> 2.878 s (1.13x; 100k refs in one transaction)",
                 commit_and_parent("4af31dc84a", "upstream 4af31dc84a (2024-04-08) and its "
                                   "parent")),
    _migrate("reftable"),
    _migrate("files"),
])


# Named sets of scenarios, usable wherever scenario names are (`reftable-lab bench first`).
# "first" is `make bench`'s default: one scenario for each seed and each later upstream
# commit, the one that carries its headline figure, so that a new user's first run
# gives exact counts of almost every optimization in minutes. It leaves out seed 001's
# reader scenarios (packed-verify-missing, packed-load: parse_all over 50k lines with
# each reader takes minutes a variant under callgrind), so packed_reader and
# refname_safety are measured by `reftable-lab bench` with no names (every scenario).
SETS: dict[str, tuple[str, ...]] = {
    "first": ("show-ref-3tables", "update-ref-create-100", "update-ref-create-100k",
              "packed-prefix-list", "odb-log-raw", "show-ref-decoding",
              "rev-list-many-refs", "p1401-recreate", "update-ref-create-100k-reuse",
              "update-ref-create-100k-namecheck", "migrate-to-files", "migrate-to-reftable"),
}


def expand_names(names: Iterable[str]) -> list[str]:
    """names with each set's name replaced by its scenarios (order kept, no repeats)."""
    out: list[str] = []
    for n in names:
        for m in SETS.get(n, (n,)):
            if m not in out:
                out.append(m)
    return out


"""Seed 002's published figures, unreproduced items and real-C recipes (data for
lab.scenarios' odb scenarios): the delta base cache series of 2016 (git.git
85fe35ab9e..c7df68cbca)."""
from __future__ import annotations

from .c_recipes import OLD_BUILD, CRecipe, Recipe, commit_and_parent

# Seed 002's own figures (git.git unless said; best-of-3 wall clock, --depth=50, the
# default 96m limit): 5/7's MAX_DELTA_CACHE tables (blob_first before 5/7, single after),
# 6/7's hashmap, 7/7's t/perf and the cover letter's limit table (linux.git).
SEED_002_SLOTS = {
    "log-S": {("blob_first", 256, 4096): "12.634 s -> 6.484 s (1.95x; 5/7 table, before)",
              ("blob_first", 4096, 16384): "6.484 s -> 19.845 s (0.33x: slower, blob_first "
                                           "walks the whole LRU list; 5/7 table)",
              ("single", 256, 4096): "12.821 s -> 6.448 s (1.99x; 5/7 table, one LRU)",
              ("single", 4096, 16384): "6.448 s -> 6.502 s (0.99x: flat; 5/7 table, one LRU)"},
    "log-raw": {("blob_first", 256, 4096): "2.212 s -> 2.190 s (1.01x: noise; 5/7 table)",
                ("blob_first", 4096, 16384): "2.190 s -> 2.913 s (0.75x: slower; 5/7 table)",
                ("single", 256, 4096): "2.227 s -> 2.194 s (1.02x; 5/7 table, one LRU)",
                ("single", 4096, 16384): "2.194 s -> 2.144 s (1.02x; 5/7 table, one LRU)"},
}
SEED_002_LRU_16384 = {"log-S": "19.845 s -> 6.502 s (3.05x; 5/7 tables at 16384)",
                       "log-raw": "2.913 s -> 2.144 s (1.36x; 5/7 tables at 16384)"}
SEED_002_HASHMAP = {"log-S": "12.821 s -> 6.688 s (1.92x; 256 slots, one LRU, vs 6/7's "
                              "hashmap)",
                     "log-raw": "2.227 s -> 2.144 s (1.04x; 256 slots, one LRU, vs 6/7's "
                                "hashmap)"}
SEED_002_PERF = {"log-raw": "43.41 s -> 33.86 s (-22.0%; 7/7 t/perf 0003.1, linux.git)",
                  "log-S": "313.61 s -> 298.75 s (-4.7%; 7/7 t/perf 0003.2, linux.git)"}
SEED_002_UNREPRODUCED = {
    "linux.git tables (5/7, 6/7)": "the lab's history is one synthetic repository; its "
                                   "rows carry the git.git tables",
    "5/7 two LRU lists (blobs, then others)": "a strategy the patch tried and dropped: no "
                                              "flag models it",
    "6/7 hashmap vs the best MAX_DELTA_CACHE (6.448 s vs 6.688 s)": "the slot grid runs at "
        "limits that evict, where no hashmap point is run; delta_cache_index: fixed:256 -> "
        "hashmap compares at 96m",
}


# Seed 002 in git.git (2016-08-22, v2.11.0-rc0): 1/7 85fe35ab9e on 2632c897f7 (Git
# 2.10-rc1) .. 4/7 12d95ef6fc (list.h LRU), 5/7 6d9617f4f7 (no blob special case), 6/7
# 8261e1f139 (hashmap), 7/7 c7df68cbca (t/perf): the series' own commits, on packs.
SEED_002_C = {
    "all optimizations (off -> on)": CRecipe(
        Recipe("85fe35ab9e~1"), Recipe("c7df68cbca"),
        "seed 002's own commits: the series' base (1/7's parent, Git 2.10-rc1) and its tip "
        f"7/7; the published figure is 7/7's t/perf over linux.git; {OLD_BUILD}"),
    "delta_cache_index: fixed:256 -> hashmap": commit_and_parent(
        "8261e1f139", f"seed 002 6/7 (hashmap.h) and its parent 5/7; {OLD_BUILD}"),
}
SEED_002_SLOTS_NO_C = ("the scenario has no git peer, and its slot counts are the 5/7 "
                        "message's experiments (MAX_DELTA_CACHE edited by hand, at a small "
                        "core.deltaBaseCacheLimit), not commits of git.git")
SEED_002_LIMITS_NO_C = ("two core.deltaBaseCacheLimit values on one tree (a config "
                         "comparison, not two trees); the scenario has no git peer, and "
                         "the figure is the cover letter's linux.git")

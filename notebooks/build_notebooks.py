"""Generate the lab's notebooks (run: .venv/bin/python notebooks/build_notebooks.py).

The .ipynb files are committed; this script is their source, so edits go here.
Every notebook runs top to bottom at the small scale in a few minutes (the
test suite executes them with nbmake); change SCALE/MODE in the first code
cell for the seeds' full scale.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

LINE_MAX = 88      # no code line runs off the edge of a notebook (a test checks it)


def setup(notebook: str) -> str:
    """The first code cell: the notebook's own dataset and results folders (git-ignored),
    printed, and the knobs every later cell reads."""
    return f'''import os, sys, pathlib
ROOT = pathlib.Path.cwd().resolve()
while not (ROOT / "pyproject.toml").exists() and ROOT != ROOT.parent:
    ROOT = ROOT.parent
# this notebook's own folders (git-ignored; the browser test sets REFTABLE_LAB_NB_DIR):
LABS = pathlib.Path(os.environ.get("REFTABLE_LAB_NB_DIR", ROOT / "notebooks" / ".lab"))
LAB = LABS / "{notebook}"
DATASETS, RESULTS = LAB / "datasets", LAB / "results"
from reftable_core.flags import Flags, baseline, FLAG_INFO
from lab import nb
SCALE = "small"      # "full" = the seeds' million-ref scale (slow)
MODE = "quick"       # pyperf effort: quick | fast | normal | rigorous
MEASURE = "time"     # or "instructions": exact callgrind counts (a minute a variant)
ROUNDS = 3           # interleaved rounds in one worker; None: full pyperf runs (MODE)
print("datasets:", DATASETS)
print("results: ", RESULTS)'''


def notebook(cells: list) -> nbformat.NotebookNode:
    nbk = new_notebook(cells=cells)
    nbk.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                  "language": "python"}
    return nbk


def flag_lab(benchmarks: list[tuple[str, list[str]]], toggles: dict[str, str]) -> str:
    """The FlagLab cell: the picker, the benchmark chooser and Run."""
    lines = ["lab = nb.FlagLab(", "    {"]
    for name, only in benchmarks:
        lines += textwrap.wrap(f"{name!r}: {only!r},", LINE_MAX - 8,
                               initial_indent=" " * 8, subsequent_indent=" " * 12,
                               break_on_hyphens=False)
    lines += ["    },", f"    quick={benchmarks[0][0]!r},", "    variants={"]
    lines += [f"        {k!r}: {v!r}," for k, v in toggles.items()]
    lines += ["    },", "    datasets=DATASETS, results=RESULTS,",
              "    settings=nb.Settings(scale=SCALE, mode=MODE, measure=MEASURE, rounds=ROUNDS),", ")", "lab"]
    return "\n".join(lines)


PICKER_TEXT = (
    "Each control is one flag (hover it for what *on* "
    "does). **Run** times the quick look below again and measures the chosen benchmark "
    "with the picked flags (the variant `picker`, beside the benchmark's own variants), "
    "replacing their outputs in place. `lab.picker.flags` is the picked `Flags` value.")
PICKER_MD = "## Pick the flags, press Run\n\n" + PICKER_TEXT


def seed_notebook(stem: str, title: str, intro: str, scenarios: list[tuple[str, list[str]]],
                  toggles: dict[str, str], explore: str) -> nbformat.NotebookNode:
    cells = [new_markdown_cell(f"# {title}\n\n{intro}"), new_code_cell(setup(stem)),
             new_markdown_cell(PICKER_MD), new_code_cell(flag_lab(scenarios, toggles)),
             new_markdown_cell(
                 "## Quick look\n\nBest of a few rounds after a discarded warm-up round, "
                 "the variants interleaved in one worker process (the harness at its "
                 "quickest, into pyperf JSON under `RESULTS`); for exploring. Numbers with "
                 "confidence intervals come from the harness below."),
             new_code_cell("lab.quick_look()"),
             new_markdown_cell(
                 "## Measure with the harness, beside real git\n\n`ROUNDS` interleaved "
                 "rounds of every variant run in one worker process (`ROUNDS = None`: full "
                 "pyperf runs in `MODE`); ratios carry 95% confidence intervals. The first "
                 "plot marks the seed's published ratio (red diamond) on the lab's; the "
                 "second sets each published figure (marker) beside the lab's ratio (bar), "
                 "row by row; **Run** redraws both with the picked flags. Set "
                 "`MEASURE = \"instructions\"` for exact counts."
                 + ("" if len(scenarios) == 1 else
                    " The other benchmarks (" + ", ".join(f"`{n}`" for n, _ in scenarios[1:])
                    + ") are in the picker's chooser: pick one and press **Run**.")),
              new_code_cell(f"lab.bench({scenarios[0][0]!r})")]
    cells += [new_markdown_cell("## Explore"), new_code_cell(explore)]
    return notebook(cells)


NOTEBOOKS = {
    "01-seed000-reftable-iteration.ipynb": seed_notebook(
        "01-seed000-reftable-iteration",
        "Seed 000 — reftable: improve ref iteration performance",
        "Patrick Steinhardt's series (2024) cuts allocations when iterating many refs: "
        "record comparison by key fields (`merged_cmp`, 2/7), skipping the comparison for "
        "records of the same sub-iterator (`same_subiter_skip`, 3/7), allocation-less "
        "priority-queue comparison (`pq_cmp`, 4/7), swapping block buffers instead of "
        "copying (`block_key_swap`, 5/7) and not reallocating the ref name (`ref_name_alloc`, "
        "6/7). Workload: `git show-ref refs/heads/<one name>` over a million refs in 1 and 3 "
        "tables. Published: 1.11x, 1.04x, 1.30x (3 tables), 1.03x, 1.01x.\n\n"
        "Git 2.45 later stopped using the queue once a single sub-iterator is left "
        "(`single_subiter_bypass`, on by default, not from a seed). With it on, one table "
        "never reaches the merge loop, so `merged_cmp`, `same_subiter_skip` and `pq_cmp` "
        "can only show their effect there when measured alone against the baseline "
        "(`only-merged_cmp` vs `all-off`), as the seed measured them.",
        [("show-ref-3tables", ["all-on", "all-off+merged_cmp+same_subiter_skip",
                               "all-off+merged_cmp+same_subiter_skip+pq_cmp", "git"]),
         ("show-ref-1table", ["all-on", "all-off", "only-merged_cmp", "git"])],
        {"pq_cmp off": "pq_cmp=off", "merged_cmp off": "merged_cmp=off"},
        "ds = nb.dataset('show-ref-3tables', SCALE, DATASETS)   # the one measured above\n"
        "print(ds.manifest['facts']['probe_refs'])\n"
        "!{sys.executable} -m lab.cli dump --stack {ds.gitdir}/reftable | head -20"),
    "02-seed001-packed-refs.ipynb": seed_notebook(
        "02-seed001-packed-refs",
        "Seed 001 — packed-refs speed regressions",
        "Jeff King (2015): a 13-million-ref, 1.6 GB packed-refs file made every command slow. "
        "The series moves from `fgetc` to `getc_unlocked`, stops growing the line buffer one "
        "character at a time, reads with `getdelim`, and checks refname safety only when "
        "needed (`refname_safety`); the discussion adds mmap and binary search "
        "(`packed_lookup=bsearch`: 1.649 s -> 0.012 s for one missing ref).",
        [("packed-verify-missing", ["all-on", "packed_lookup=parse_all", "packed_reader=fgetc",
                                    "packed_reader=getc_unlocked", "git"]),
         ("packed-load", ["all-on", "packed_reader=fgetc", "dulwich"])],
        {"getdelim": "packed_reader=getdelim,packed_lookup=parse_all",
         "parse_all": "packed_lookup=parse_all"},
        "from reftable_core.refs.packed import PackedRefs\n"
        "ds = nb.dataset('packed-verify-missing', SCALE, DATASETS)   # measured above\n"
        "packed = ds.gitdir / 'packed-refs'\n"
        "for reader in ('fgetc', 'getc_unlocked', 'getdelim', 'mmap'):\n"
        "    f = Flags().with_spec(f'packed_reader={reader},packed_lookup=parse_all')\n"
        "    n, secs = nb.timed(lambda: sum(1 for _ in PackedRefs(packed, 20, f)))\n"
        "    print(f'{reader:14s} {n} refs in {secs:.3f} s')"),
    "03-seed002-delta-base-cache.ipynb": seed_notebook(
        "03-seed002-delta-base-cache",
        "Seed 002 — tweaking the delta base cache",
        "Jeff King (2016): the delta base cache evicted blobs first with a walk over the "
        "whole LRU list (`delta_cache_lru=blob_first`) and kept its entries in 256 fixed "
        "slots where a collision evicts (`delta_cache_index=fixed:256`). The series moves to "
        "one LRU list and a real hash map. Workloads: `git log --raw` and `git log -S` over a "
        "history packed with `--depth=50`. Published: -22.0% and -4.7%.",
        [("odb-log-raw", ["all-on", "delta_cache_index=fixed:256", "git"]),
         ("odb-log-S", ["all-on", "delta_cache_lru=blob_first", "git"])],
        {"fixed:256": "delta_cache_index=fixed:256", "blob_first": "delta_cache_lru=blob_first"},
        "from reftable_core.odb import open_object_store\n"
        "from reftable_core.odb.walk import walk_log_raw\n"
        "from reftable_core.builtin.odb import walk_start\n"
        "ds = nb.dataset('odb-log-raw', SCALE, DATASETS)   # the one measured above\n"
        "for spec in ('delta_cache_index=fixed:256', 'delta_cache_index=hashmap'):\n"
        "    f = Flags().with_spec(spec)\n"
        "    with open_object_store(ds.gitdir, None, f) as store:\n"
        "        start = walk_start(ds.gitdir, 'refs/heads/main', store, f)\n"
        "        n = sum(len(ch) for _, ch in walk_log_raw(store, start))\n"
        "        print(spec, n, 'changes', store.stats.as_dict())"),
    "04-seed003-block-type-early-exit.ipynb": seed_notebook(
        "04-seed003-block-type-early-exit",
        "Seed 003 — reftable: fix perf regression when reading blocks of unwanted type",
        "Patrick Steinhardt (2025): after a refactoring, a block of an unwanted type (the log "
        "block after the last ref block, met on every lookup of a ref that sorts past the ref "
        "section) was fully set up — inflated — before being rejected. The fix returns right "
        "after the type byte (`block_type_early_exit`). Workload: `update-ref: create 100k "
        "refs`. Published: 1.62x.",
        [("update-ref-create-100k", ["all-on", "block_type_early_exit=off", "git"])],
        {"early exit off": "block_type_early_exit=off"},
        "!{sys.executable} -m lab.cli flags | grep -A2 block_type_early_exit"),
    "05-seed004-io-patterns.ipynb": seed_notebook(
        "05-seed004-io-patterns",
        "Seed 004 — reftable: optimize I/O patterns",
        "Patrick Steinhardt (2024): a stat(2)-based cache avoids re-reading `tables.list` on "
        "every up-to-date check (`stat_cache`), and tables are read through one mmap instead "
        "of a pread per block (`mmap`). Workload: `git update-ref --stdin` creating N refs in "
        "an empty repository. Published at 10k refs: 1.31 s -> 0.92 s -> 0.48 s.",
        [("update-ref-create-10000", ["all-on", "all-off", "only-stat_cache", "git"])],
        {"stat_cache off": "stat_cache=off", "mmap off": "mmap=off"},
        "print(FLAG_INFO['stat_cache'])\nprint(FLAG_INFO['mmap'])"),
}


def tour() -> nbformat.NotebookNode:
    return notebook([
        new_markdown_cell(
            "# A tour of reftable-lab\n\nThe core (`reftable_core`) implements git's ref and "
            "object storage for real; every optimization from the seed threads is a flag; "
            "`data_gen` builds datasets; the harness measures each flag on and off beside real "
            "git. This notebook walks through each piece at a small scale, on one dataset: "
            "the one the measurement at the end uses."),
        new_code_cell(setup("00-tour")),
        new_markdown_cell("## The flags"),
        new_code_cell("!{sys.executable} -m lab.cli flags | head -16"),
        new_markdown_cell("## A dataset: a reftable stack of 3 tables"),
        new_code_cell("ds = nb.dataset('show-ref-3tables', SCALE, DATASETS)\n"
                      "print(ds.gitdir)\nprint(ds.manifest['facts']['probe_refs'])"),
        new_markdown_cell("## Read it: our show-ref beside git's"),
        new_code_cell("from gitbin import find_git\n"
                      "probe = ds.manifest['facts']['probe_refs']['middle']\n"
                      "!{sys.executable} -m lab.cli show-ref --git-dir {ds.gitdir} {probe}\n"
                      "!{find_git()} --git-dir {ds.gitdir} show-ref {probe}"),
        new_markdown_cell("## The same through the Python API\n\nObject ids print in hex, "
                          "as git prints them."),
        new_code_cell("from reftable_core.repo import open_repo\n"
                      "repo = open_repo(ds.gitdir, Flags())\n"
                      "refs = list(repo.refs.iter_refs(b'refs/tags/'))\n"
                      "print(len(refs))\nrefs[:2]"),
        new_markdown_cell("## One measurement with confidence intervals\n\n" + PICKER_TEXT),
        new_code_cell(flag_lab([("show-ref-3tables", ["all-on", "all-off", "git"])],
                               {"pq_cmp off": "pq_cmp=off"})),
        new_code_cell("lab.quick_look()"),
        new_code_cell("lab.bench('show-ref-3tables')"),
    ])


def profiling() -> nbformat.NotebookNode:
    return notebook([
        new_markdown_cell(
            "# Profiling the hot loops\n\nline_profiler on the functions a scenario names as "
            "hot (for show-ref: the ref block decoder and the merge loop with the priority "
            "queue inline, each generated for the chosen flags), cProfile for the call tree, and "
            "scalene for CPU and memory per line. Toggle a flag and profile again to see "
            "where the time moves."),
        new_code_cell(setup("06-profiling") + "\nfrom lab.scenarios import SCENARIOS\n"
                      "from lab import profiling\nOUT = RESULTS / 'profiles'\n"
                      "OUT.mkdir(parents=True, exist_ok=True)\n"
                      "SC = SCENARIOS['show-ref-3tables']"),
        new_markdown_cell("## line_profiler: merged iteration with pq_cmp on and off"),
        new_code_cell("for spec in ('pq_cmp=on', 'pq_cmp=off'):\n"
                      "    out = profiling.line_profile(SC, SCALE, Flags().with_spec(spec),\n"
                      "                                 OUT / f'line-{spec}.txt', "
                      "datasets_dir=DATASETS)\n"
                      "    print(spec, '\\n', out.read_text()[:3000])"),
        new_markdown_cell("## cProfile: the call tree"),
        new_code_cell("out = profiling.c_profile(SC, SCALE, Flags(), OUT / 'cprofile.txt',\n"
                      "                          datasets_dir=DATASETS)\n"
                      "print(out.read_text()[:4000])"),
        new_markdown_cell("## scalene (runs the workload in a subprocess)\n\nSlower; "
                          "set RUN_SCALENE = True to run it."),
        new_code_cell("RUN_SCALENE = False\nif RUN_SCALENE:\n"
                      "    out = profiling.scalene_profile(SC, SCALE, Flags(), "
                      "OUT / 'scalene.txt',\n"
                      "                                    datasets_dir=DATASETS)\n"
                      "    print(out.read_text()[:4000])"),
    ])


def datasets() -> nbformat.NotebookNode:
    return notebook([
        new_markdown_cell(
            "# Regenerating datasets\n\nEvery preset is deterministic (seeded, pinned "
            "timestamps) and cached: asking again for the same parameters reuses it, a "
            "changed parameter rebuilds it. Each dataset is a real git repository."),
        new_code_cell(setup("07-datasets") + "\nimport data_gen"),
        new_code_cell("for name, desc, seed, defaults in data_gen.list_presets():\n"
                      "    print(f'{name:18s} seed {seed}\\n    {desc}\\n    "
                      "defaults {defaults}')"),
        new_markdown_cell("## Build, rebuild, cache hit\n\nChange `REFS` or `SEED` and run "
                          "again: the content hash changes."),
        new_code_cell("REFS, SEED = 3_000, 0\n"
                      "args = dict(refs=REFS, seed=SEED, root=DATASETS)\n"
                      "a, secs = nb.timed(data_gen.build, 'refs-1m-1table', progress=True, "
                      "**args)\n"
                      "b, secs2 = nb.timed(data_gen.build, 'refs-1m-1table', **args)\n"
                      "print(a.path, a.manifest['content_hash'], f'{secs:.2f} s')\n"
                      "print('second call cached:', b.cached, f'{secs2:.3f} s')"),
        new_markdown_cell("## Check it with git"),
        new_code_cell("from gitbin import find_git\n"
                      "!{find_git()} --git-dir {a.gitdir} show-ref | head -5\n"
                      "!{find_git()} --git-dir {a.gitdir} fsck --no-progress && echo fsck ok"),
    ])


def all_notebooks() -> dict[str, nbformat.NotebookNode]:
    """Every notebook by file name, as build_notebooks writes it (cell ids stable: a
    rebuild changes only what changed)."""
    out = {"00-tour.ipynb": tour(), **NOTEBOOKS, "06-profiling.ipynb": profiling(),
           "07-datasets.ipynb": datasets()}
    for name, nbk in out.items():
        for i, cell in enumerate(nbk.cells):
            cell["id"] = f"{name.split('-')[0]}-{i:02d}"
    return out


def main() -> None:
    for name, nbk in all_notebooks().items():
        nbformat.write(nbk, HERE / name)
        print("wrote", HERE / name)


if __name__ == "__main__":
    main()

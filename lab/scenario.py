"""What a scenario is: its variants, its comparisons, and the work each flag is about.

Contract: a Scenario names a data_gen preset (with parameters per scale), a workload
(a key of lab.workloads.WORKLOADS), the flag variants to run, the peers beside them and
the comparisons to report as ratios, with the seed's published figures; variants() and
comparisons() expand it at a scale. WORK_OF_FLAG names the work counters each flag is
about (studied_counters: those of a comparison). lab.scenarios holds the registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, Iterable

from reftable_core.flags import FLAG_INFO, Flags, baseline

import data_gen
from .c_recipes import CRecipe


@dataclass(frozen=True)
class Variant:
    label: str
    flags: Flags
    workload: str
    peer: bool = False                  # a peer (git, dulwich, our CLI), not a flags variant


@dataclass(frozen=True)
class DatasetRef:
    path: Path
    gitdir: Path


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: str
    description: str
    preset: str
    scale_params: dict[str, dict[str, Any]]          # scale -> dataset + workload params
    workload: str
    studied: tuple[str, ...]                          # flags toggled one at a time
    published: str
    flag_values: dict[str, tuple[str, ...]] = field(default_factory=dict)  # multi-valued flags
    peer_workloads: tuple[tuple[str, str], ...] = ()  # (label, workload)
    extra_variants: tuple[tuple[str, str | Flags], ...] = ()  # (label, flags spec on top
    #                                   of default, or the Flags value itself)
    dataset_keys: tuple[str, ...] = ("refs", "tables", "seed", "object_format")
    hot: tuple[str, ...] = ()   # line_profiler: "module:qualname" or "module:factory()"
    #                             (called as factory(flags) for the function or list of them)
    cumulative: tuple[str, ...] = ()  # on|off flags switched on one by one on top of all-off,
    #                                   each step keeping the previous ones (a seed's sequence)
    row_published: dict[str, str] = field(default_factory=dict)  # comparison title -> the
    #                                   seed's figure for that row (rows not named: none yet)
    flag_base: dict[str, str] = field(default_factory=dict)  # studied flag -> flags spec its
    #                                   "others on" variants and their row's fast side use
    same_work: dict[str, str] = field(default_factory=dict)  # comparison title (may name
    #                                   scale params) -> why both sides do the same work: the
    #                                   row exists to show that (a test checks every other row)
    extra_comparisons: tuple[tuple[str, str, str], ...] = ()  # (title, slow label, fast
    #                                   label), any of them may name scale params: rows beside
    #                                   the generated ones (a seed's step between two variants)
    unreproduced: dict[str, str] = field(default_factory=dict)  # a seed figure no row
    #                                   reproduces -> why (printed in the report)
    c_recipes: dict[str, CRecipe] = field(default_factory=dict)  # comparison title -> the
    #                                   git.git trees of real C's before and after (lab.c_recipes)
    no_c: dict[str, str] = field(default_factory=dict)  # comparison title -> why that row
    #                                   has no real-C figure
    extras_at: dict[str, tuple[str, ...]] = field(default_factory=dict)  # scale -> the
    #                                   extra variants (labels as written) run at that scale;
    #                                   a scale not named runs them all

    # -- parameters --------------------------------------------------------
    def params(self, scale: str) -> dict[str, Any]:
        if scale not in self.scale_params:
            raise KeyError(f"scenario {self.name} has no scale {scale!r}; "
                           f"known: {', '.join(self.scale_params)}")
        return dict(self.scale_params[scale])

    def dataset_params(self, scale: str) -> dict[str, Any]:
        return {k: v for k, v in self.params(scale).items() if k in self.dataset_keys}

    def dataset(self, scale: str, datasets_dir: Path | str | None = None) -> DatasetRef:
        kwargs = self.dataset_params(scale)
        if datasets_dir is not None:
            kwargs["root"] = Path(datasets_dir)
        ds = data_gen.build(self.preset, progress=True, **kwargs)
        return DatasetRef(Path(ds.path), Path(ds.gitdir))

    # -- variants ----------------------------------------------------------
    def _text(self, text: str, scale: str) -> str:
        """An extra variant's label or spec, its {fields} filled from the scale's params."""
        return text.format_map(self.params(scale)) if "{" in text else text

    def _base(self, name: str, scale: str) -> Flags:
        """The flags a studied flag's "others on" variants are built on (flag_base)."""
        return Flags().with_spec(self._text(self.flag_base.get(name, ""), scale))

    def _base_label(self, name: str, scale: str) -> str:
        spec = self._text(self.flag_base.get(name, ""), scale)
        return spec or "all-on"

    def _flag_variants(self, scale: str) -> list[Variant]:
        out = [Variant("all-on", Flags(), self.workload),
               Variant("all-off", baseline(), self.workload)]
        for name in self.studied:
            base = self._base(name, scale)
            if name in self.flag_values:
                default = getattr(Flags(), name)
                for value in self.flag_values[name]:
                    if value != default:
                        out.append(Variant(f"{name}={value}", base.with_spec(f"{name}={value}"),
                                           self.workload))
            else:
                out.append(Variant(f"{name}=off", base.with_spec(f"{name}=off"), self.workload))
                out.append(Variant(f"only-{name}", baseline().with_spec(f"{name}=on"),
                                   self.workload))
        for label, spec in self._extras(scale):
            flags = spec if isinstance(spec, Flags) else Flags().with_spec(self._text(spec, scale))
            out.append(Variant(self._text(label, scale), flags, self.workload))
        known = {v.flags for v in out}
        for name in self.flag_base:          # the bases themselves, where no variant has them
            base = self._base(name, scale)
            if base not in known:
                out.append(Variant(self._base_label(name, scale), base, self.workload))
                known.add(base)
        return out

    def _extras(self, scale: str) -> tuple[tuple[str, str | Flags], ...]:
        """The extra variants run at `scale` (extras_at, else all of them)."""
        if scale not in self.extras_at:
            return self.extra_variants
        keep = set(self.extras_at[scale])
        return tuple((label, spec) for label, spec in self.extra_variants if label in keep)

    def _steps(self, known: Iterable[Variant]) -> list[Variant]:
        """The cumulative steps; a step whose flags another variant has takes its label."""
        by_flags = {v.flags: v.label for v in known}
        flags, out = baseline(), []
        for i, name in enumerate(self.cumulative):
            flags = flags.with_spec(f"{name}=on")
            label = by_flags.get(flags, "all-off+" + "+".join(self.cumulative[:i + 1]))
            out.append(Variant(label, flags, self.workload))
        return out

    def variants(self, scale: str = "small") -> list[Variant]:
        """Every variant at `scale` (extra variants may name scale parameters, e.g. the
        delta base cache limits, so that the cache evicts at every scale)."""
        out = self._flag_variants(scale)
        labels = {v.label for v in out}
        out += [v for v in self._steps(out) if v.label not in labels]
        out += [Variant(label, Flags(), workload, peer=True)
                for label, workload in self.peer_workloads]
        return out

    def comparisons(self, scale: str = "small") -> list[tuple[str, str, str]]:
        """(title, slow label, fast label): ratio = time(slow) / time(fast). A studied
        flag with a flag_base is compared on that base ("alone, others on" then means
        the others of the base), the title naming it."""
        variants = self._flag_variants(scale)
        by_flags = {v.flags: v.label for v in variants}
        rows = [("all optimizations (off -> on)", "all-off", "all-on")]
        for name in self.studied:
            fast = by_flags[self._base(name, scale)]
            on = f" ({self._base_label(name, scale)})" if name in self.flag_base else ""
            if name in self.flag_values:
                default = getattr(Flags(), name)
                for value in self.flag_values[name]:
                    if value != default:
                        rows.append((f"{name}: {value} -> {default}{on}", f"{name}={value}",
                                     fast))
            else:
                rows.append((f"{name} alone, others on{on}", f"{name}=off", fast))
                rows.append((f"{name} alone, others off", "all-off", f"only-{name}"))
        for label, _ in self._extras(scale):
            rows.append((f"{self._text(label, scale)} vs all-on", self._text(label, scale),
                         "all-on"))
        labels = {v.label for v in variants}
        for title, slow, fast in self.extra_comparisons:
            slow, fast = self._text(slow, scale), self._text(fast, scale)
            if slow in labels and fast in labels:
                rows.append((self._text(title, scale), slow, fast))
        prev = "all-off"
        pairs = {(slow, fast) for _, slow, fast in rows}
        steps = self._steps(variants)
        for name, step in zip(self.cumulative, steps):
            if (prev, step.label) not in pairs:
                rows.append((f"+{name} on top of {prev}", prev, step.label))
            prev = step.label
        if len(steps) >= 2:
            rows.append((f"the whole sequence ({' then '.join(self.cumulative)})",
                         "all-off", prev))
        for label, _ in self.peer_workloads:
            rows.append((f"{label} over reftable-lab (all-on)", "all-on", label))
        return rows

    def cumulative_steps(self, scale: str = "small") -> list[tuple[str, str]]:
        """(flag switched on, variant label) along the cumulative sequence, starting
        from ("", "all-off"); [] without one."""
        if not self.cumulative:
            return []
        steps = self._steps(self._flag_variants(scale))
        return [("", "all-off")] + [(name, v.label) for name, v in zip(self.cumulative, steps)]

    def traces_loops(self, scale: str = "small") -> bool:
        """Does a variant (all-off aside) set a flag whose work is counted in the hot
        loops' bytecodes? Only then does the work pass trace them (it is slow)."""
        return any("loop_bytecodes" in studied_counters(v.flags, Flags())
                   for v in self.variants(scale) if not v.peer and v.label != "all-off")

    def same_work_rows(self, scale: str = "small") -> dict[str, str]:
        """Comparison title -> why its two variants do the same studied work (rows kept
        to show exactly that), at `scale`: those of the rows run there (extras_at)."""
        titles = {title for title, _, _ in self.comparisons(scale)}
        return {t: why for t, why in ((self._text(title, scale), why)
                                      for title, why in self.same_work.items())
                if t in titles}


# The work counters (reftable_core.counters, plus the work pass's loop_bytecodes and the
# malloc-level "allocs") each flag is about: a comparison's studied counters are those of
# the flags its two variants set differently (lab.harness.work_differs).
_LOOP_WORK = ("loop_bytecodes", "allocs")
_CACHE_WORK = ("delta_cache_lookups", "delta_cache_hits", "delta_cache_misses",
               "delta_cache_adds", "delta_cache_evictions", "delta_cache_collisions",
               "delta_cache_lru_steps", "delta_cache_deltas", "pack_objects_read")
WORK_OF_FLAG: dict[str, tuple[str, ...]] = {
    "merged_cmp": _LOOP_WORK,
    "same_subiter_skip": _LOOP_WORK,
    "pq_cmp": _LOOP_WORK,
    "single_subiter_bypass": _LOOP_WORK,
    "block_key_swap": _LOOP_WORK,
    "ref_name_alloc": _LOOP_WORK,
    "decode_key_in_place": _LOOP_WORK,
    "next_block_in_place": ("block_iters_built", *_LOOP_WORK),
    "seek_in_place": ("seek_iter_copies", "allocs"),
    "restart_key_in_place": ("restart_keys_decoded", "allocs"),
    "block_type_early_exit": ("blocks_read", "blocks_set_up", "blocks_inflated"),
    "stat_cache": ("tables_list_reads", "tables_list_stats"),
    "skip_name_check": ("library_name_checks", "tables_opened"),
    "tombstone_suppression": ("deletions_suppressed", "deletions_returned"),
    "iterator_reuse": ("ref_iterators_built",),
    "initial_transaction_check": ("refname_store_checks",),
    "migrate_initial": ("loose_refs_written",),
    "writer_scratch": ("writer_buffers_built", "writer_buffers_reused", "allocs"),
    "block_writer_scratch": ("block_writer_buffers_built", "block_writer_buffers_reused",
                             "allocs"),
    "mmap": ("source_preads", "source_pread_bytes", "source_mmap_slices", "source_maps",
             *_LOOP_WORK),
    "packed_reader": ("packed_bytes", "packed_getc_locked", "packed_getc_unlocked",
                      "packed_buffer_reads", "packed_line_copies", "packed_maps"),
    "packed_lookup": ("packed_files_parsed", "packed_lines", "packed_bsearch_seeks",
                      "packed_maps", "refname_format_checks"),
    "refname_safety": ("refname_normalized", "refname_escape_scans"),
    "delta_cache_index": _CACHE_WORK,
    "delta_cache_lru": _CACHE_WORK,
    "delta_cache_limit": _CACHE_WORK,
}


def studied_counters(a: Flags, b: Flags) -> tuple[str, ...]:
    """The work counters studied by a comparison of flags a and b (WORK_OF_FLAG of
    every flag they set differently), in a stable order."""
    names: dict[str, None] = {}
    for flag, counters in WORK_OF_FLAG.items():
        if getattr(a, flag) != getattr(b, flag):
            names.update(dict.fromkeys(counters))
    return tuple(names)


def grid(**axes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """extra_variants for every combination of the axes' values: label "v1,v2,...",
    spec "flag1=v1,flag2=v2,..." (in the order the axes are given)."""
    names = list(axes)
    return tuple((",".join(values), ",".join(f"{n}={v}" for n, v in zip(names, values)))
                 for values in product(*axes.values()))


def registry(scenarios: Iterable[Scenario]) -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    for s in scenarios:
        if s.name in out:
            raise ValueError(f"duplicate scenario {s.name}")
        for f in (*s.studied, *s.cumulative):
            if f not in FLAG_INFO:
                raise ValueError(f"scenario {s.name} studies unknown flag {f}")
        out[s.name] = s
    return out

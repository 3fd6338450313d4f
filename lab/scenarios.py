"""The lab's scenarios: each reproduces one seed thread's benchmark.

Contract: a Scenario names a data_gen preset (with parameters per scale), a
workload (a key of lab.workloads.WORKLOADS, timed in pyperf workers), the
flag variants to time, the peers to time beside them (real git, dulwich, our
CLI: also workloads, so every number comes from the same machinery), the
comparisons to report as ratios, and the seed's published figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from reftable_core.flags import FLAG_INFO, Flags, baseline


@dataclass(frozen=True)
class Variant:
    label: str
    flags: Flags
    workload: str | None = None         # None: the scenario's own workload


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
    extra_variants: tuple[tuple[str, str], ...] = ()  # (label, flags spec on top of default)
    dataset_keys: tuple[str, ...] = ("refs", "tables", "seed", "object_format")
    hot: tuple[str, ...] = ()   # line_profiler: "module:qualname" or "module:factory()"
    #                             (called as factory(flags) for the function or list of them)

    # -- parameters --------------------------------------------------------
    def params(self, scale: str) -> dict[str, Any]:
        if scale not in self.scale_params:
            raise KeyError(f"scenario {self.name} has no scale {scale!r}; "
                           f"known: {', '.join(self.scale_params)}")
        return dict(self.scale_params[scale])

    def dataset_params(self, scale: str) -> dict[str, Any]:
        return {k: v for k, v in self.params(scale).items() if k in self.dataset_keys}

    def dataset(self, scale: str, datasets_dir: Path | str | None = None) -> DatasetRef:
        import data_gen
        kwargs = self.dataset_params(scale)
        if datasets_dir is not None:
            kwargs["root"] = Path(datasets_dir)
        ds = data_gen.build(self.preset, progress=True, **kwargs)
        return DatasetRef(Path(ds.path), Path(ds.gitdir))

    # -- variants ----------------------------------------------------------
    def variants(self) -> list[Variant]:
        out = [Variant("all-on", Flags()), Variant("all-off", baseline())]
        for name in self.studied:
            if name in self.flag_values:
                default = getattr(Flags(), name)
                for value in self.flag_values[name]:
                    if value != default:
                        out.append(Variant(f"{name}={value}", Flags().with_spec(f"{name}={value}")))
            else:
                out.append(Variant(f"{name}=off", Flags().with_spec(f"{name}=off")))
                out.append(Variant(f"only-{name}", baseline().with_spec(f"{name}=on")))
        for label, spec in self.extra_variants:
            out.append(Variant(label, Flags().with_spec(spec)))
        for label, workload in self.peer_workloads:
            out.append(Variant(label, Flags(), workload))
        return out

    def comparisons(self) -> list[tuple[str, str, str]]:
        """(title, slow label, fast label): ratio = time(slow) / time(fast)."""
        rows = [("all optimizations (off -> on)", "all-off", "all-on")]
        for name in self.studied:
            if name in self.flag_values:
                default = getattr(Flags(), name)
                for value in self.flag_values[name]:
                    if value != default:
                        rows.append((f"{name}: {value} -> {default}", f"{name}={value}", "all-on"))
            else:
                rows.append((f"{name} alone, others on", f"{name}=off", "all-on"))
                rows.append((f"{name} alone, others off", "all-off", f"only-{name}"))
        for label, _ in self.extra_variants:
            rows.append((f"{label} vs all-on", label, "all-on"))
        for label, _ in self.peer_workloads:
            rows.append((f"{label} over reftable-lab (all-on)", "all-on", label))
        return rows


SCENARIOS: dict[str, Scenario] = {}


def register(s: Scenario) -> Scenario:
    if s.name in SCENARIOS:
        raise ValueError(f"duplicate scenario {s.name}")
    for f in s.studied:
        if f not in FLAG_INFO:
            raise ValueError(f"scenario {s.name} studies unknown flag {f}")
    SCENARIOS[s.name] = s
    return s


Factory = Callable[..., Any]

"""The named dataset presets: their parameters, defaults, limits and builders.

Contract: PRESETS maps a preset name to a Preset. `Preset.resolve(given)`
turns user parameters (None = not given) into the full, validated parameter
dict, raising DataGenError with a clear message for an unknown parameter, a
parameter the preset does not take, or an impossible combination. The
builder (data_gen.builders) then makes the dataset from those parameters only,
so the parameters identify the content.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .manifest import DataGenError

MAX_REFS = 20_000_000
OBJECT_FORMATS = ("sha1", "sha256")

# every knob any preset may take: name -> (type, help)
PARAMS: dict[str, tuple[type, str]] = {
    "refs": (int, "number of refs"),
    "tables": (int, "number of reftable tables in the stack"),
    "seed": (int, "random seed (names, values, shapes)"),
    "object_format": (str, "sha1 or sha256"),
    "via_git": (bool, "let git's own commands write the refs (cross-check)"),
    "reflog": (bool, "one reflog record per ref update"),
    "values": (str, "spread: refs point at many real commits; single: all at one"),
    "ref_format": (str, "reftable or files"),
    "commits": (int, "commits in the history"),
    "files": (int, "files in the history"),
    "depth": (int, "git repack --depth"),
    "window": (int, "git repack --window"),
}


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    seed_thread: str
    defaults: dict[str, Any]                      # tunable parameters
    fixed: dict[str, Any] = field(default_factory=dict)   # accepted only at this value
    why_fixed: dict[str, str] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None
    builder: str = ""                             # name of a function in data_gen.builders

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        params = dict(self.defaults)
        for k, v in given.items():
            if v is None:
                continue
            if k not in PARAMS:
                raise DataGenError(f"unknown parameter {k!r}; known: {', '.join(PARAMS)}")
            if k in self.defaults:
                params[k] = _coerce(k, v)
            elif k in self.fixed:
                if _coerce(k, v) != self.fixed[k]:
                    why = self.why_fixed.get(k, "")
                    raise DataGenError(f"preset {self.name} takes no --{_opt(k)} other than "
                                       f"{_show(k, self.fixed[k])}{': ' + why if why else ''}")
            else:
                why = self.why_fixed.get(k, "")
                takes = ", ".join("--" + _opt(p) for p in self.defaults)
                raise DataGenError(f"preset {self.name} does not take --{_opt(k)}"
                                   f"{': ' + why if why else ''} "
                                   f"(it takes: {takes})")
        _check_common(self.name, params)
        if self.check:
            self.check(params)
        # the fixed values are part of what the dataset is (builders read them)
        return {**params, **{k: v for k, v in self.fixed.items() if k not in params}}


def _opt(k: str) -> str:
    return k.replace("_", "-")


def _show(k: str, v: Any) -> str:
    if isinstance(v, bool):
        return f"--{_opt(k)}" if v else f"--no-{_opt(k)}"
    return str(v)


def _coerce(k: str, v: Any) -> Any:
    typ = PARAMS[k][0]
    if typ is bool:
        if isinstance(v, str):
            if v.lower() in ("1", "true", "yes", "on"):
                return True
            if v.lower() in ("0", "false", "no", "off"):
                return False
            raise DataGenError(f"--{_opt(k)}: expected a boolean, got {v!r}")
        return bool(v)
    if typ is int:
        if isinstance(v, bool):
            raise DataGenError(f"--{_opt(k)}: expected an integer, got {v!r}")
        try:
            return int(str(v).replace("_", ""))
        except ValueError:
            raise DataGenError(f"--{_opt(k)}: expected an integer, got {v!r}") from None
    return str(v)


def _check_common(name: str, p: dict[str, Any]) -> None:
    if "object_format" in p and p["object_format"] not in OBJECT_FORMATS:
        raise DataGenError(f"--object-format must be one of {', '.join(OBJECT_FORMATS)}, "
                           f"got {p['object_format']!r}")
    if "refs" in p and not 0 <= p["refs"] <= MAX_REFS:
        raise DataGenError(f"--refs must be between 0 and {MAX_REFS:,}, got {p['refs']}")
    if "seed" in p and p["seed"] < 0:
        raise DataGenError(f"--seed must be >= 0, got {p['seed']}")
    if "values" in p and p["values"] not in ("spread", "single"):
        raise DataGenError(f"--values must be spread or single, got {p['values']!r}")
    if "ref_format" in p and p["ref_format"] not in ("reftable", "files"):
        raise DataGenError(f"--ref-format must be reftable or files, got {p['ref_format']!r}")


def min_refs_for_tables(tables: int) -> int:
    """The base table must hold main plus, per table on top, one ref to
    update and one to delete (main is never deleted)."""
    return 1 + 2 * (tables - 1)


def _check_stack(p: dict[str, Any]) -> None:
    t, n = p["tables"], p["refs"]
    if t < 1:
        raise DataGenError(f"--tables must be >= 1, got {t}")
    if t > 1000:
        raise DataGenError(f"--tables must be <= 1000, got {t}")
    need = min_refs_for_tables(t)
    if n < need:
        raise DataGenError(
            f"impossible parameters: --tables {t} with --refs {n}. Every table on top of the "
            f"base shadows (updates) one ref and deletes another, and refs/heads/main stays, "
            f"so {t} tables need at least --refs {need}")
    if n < 1:
        raise DataGenError("--refs must be >= 1 (refs/heads/main always exists)")


def _check_refs_positive(p: dict[str, Any]) -> None:
    if p["refs"] < 1:
        raise DataGenError("--refs must be >= 1 (refs/heads/main always exists)")


def _check_history(p: dict[str, Any]) -> None:
    if p["commits"] < 1:
        raise DataGenError(f"--commits must be >= 1, got {p['commits']}")
    if p["files"] < 1:
        raise DataGenError(f"--files must be >= 1, got {p['files']}")
    if not 0 <= p["depth"] <= 4095:
        raise DataGenError(f"--depth must be between 0 and 4095, got {p['depth']}")
    if p["window"] < 0:
        raise DataGenError(f"--window must be >= 0, got {p['window']}")


_REFS_COMMON = {"seed": 0, "object_format": "sha1", "via_git": False, "values": "spread"}

PRESETS: dict[str, Preset] = {}


def _add(p: Preset) -> None:
    PRESETS[p.name] = p


_add(Preset(
    "refs-1m-1table",
    "1M refs (branches, annotated tags, remotes, merge requests, keep-around) in one "
    "reftable table, one reflog record per ref",
    "000 (show-ref: single matching ref, 1 table)",
    {"refs": 1_000_000, **_REFS_COMMON, "reflog": True},
    fixed={"tables": 1, "ref_format": "reftable"},
    why_fixed={"tables": "it is one table; use refs-1m-3tables --tables N for a stack",
               "ref_format": "it is a reftable dataset; packed-1m is the files backend one"},
    check=_check_refs_positive, builder="build_reftable_refs"))

_add(Preset(
    "refs-1m-3tables",
    "1M refs in one large table with smaller tables on top that shadow (update) refs, "
    "delete refs and add new ones",
    "000 4/7 (show-ref: single matching ref, 3 tables)",
    {"refs": 1_000_000, "tables": 3, **_REFS_COMMON, "reflog": True},
    fixed={"ref_format": "reftable"},
    why_fixed={"ref_format": "it is a reftable stack"},
    check=_check_stack, builder="build_reftable_refs"))

_add(Preset(
    "refs-100k-reflog",
    "100k refs and one reflog record each in one table: a ref block section followed "
    "by a log block section",
    "003 (update-ref: create 100k refs; blocks of an unwanted type)",
    {"refs": 100_000, **_REFS_COMMON},
    fixed={"tables": 1, "reflog": True, "ref_format": "reftable"},
    why_fixed={"tables": "it is one table", "reflog": "the log section is the point of it"},
    check=_check_refs_positive, builder="build_reftable_refs"))

_add(Preset(
    "empty-repo",
    "a repository holding only refs/heads/main (one commit) plus an update-ref --stdin "
    "script creating --refs new branches",
    "004 (update-ref: create N refs, N = 1, 100, 10000)",
    {"refs": 10_000, "seed": 0, "object_format": "sha1", "via_git": False,
     "ref_format": "reftable", "reflog": True},
    builder="build_empty_repo"))

_add(Preset(
    "packed-1m",
    "a files-backend repository whose refs all live in one sorted, fully peeled "
    "packed-refs file (--refs up to 13 million and beyond)",
    "001 (missing ref in a huge packed-refs; reader strategies)",
    {"refs": 1_000_000, **_REFS_COMMON},
    fixed={"tables": 1, "ref_format": "files", "reflog": False},
    why_fixed={"tables": "packed-refs has no tables",
               "reflog": "packed refs carry no reflogs"},
    check=_check_refs_positive, builder="build_packed_refs"))

_add(Preset(
    "history-depth50",
    "a synthetic history (--commits commits over --files files, made with git "
    "fast-import) packed with git repack -adf --depth=50 --window=250",
    "002 (log --raw / log -S over deep delta chains; delta base cache)",
    {"commits": 3000, "files": 2000, "seed": 0, "object_format": "sha1",
     "depth": 50, "window": 250},
    fixed={"via_git": False, "ref_format": "files"},
    why_fixed={"via_git": "it is always made by git (fast-import + repack)",
               "refs": "it holds one branch", "tables": "it is a files-backend repository"},
    check=_check_history, builder="build_history"))


def _check_real_shaped(p: dict[str, Any]) -> None:
    if p["refs"] < 10 or p["commits"] < 2:
        raise DataGenError("refs-real-shaped needs --refs >= 10 and --commits >= 2")


_add(Preset(
    "refs-real-shaped",
    "a project-shaped repository: a history with real-shaped messages (bodies, trailers) by "
    "several people, annotated and lightweight tags, branches, remote-tracking refs, "
    "upstream and push config (data_gen.realshaped)",
    "issue 29 (for-each-ref with every atom, beside git)",
    {"refs": 100_000, "commits": 5000, "seed": 0, "object_format": "sha1",
     "ref_format": "reftable"},
    fixed={"via_git": True},
    why_fixed={"via_git": "git's fast-import and update-ref write it"},
    check=_check_real_shaped, builder="build_real_shaped"))

def list_presets() -> list[tuple[str, str, str, dict[str, Any]]]:
    return [(p.name, p.description, p.seed_thread, dict(p.defaults)) for p in PRESETS.values()]


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise DataGenError(f"unknown preset {name!r}; known presets: "
                           f"{', '.join(PRESETS)} (see `reftable-lab gen --list`)") from None

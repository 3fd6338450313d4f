"""data_gen: deterministic, cached benchmark datasets (real git repositories).

    import data_gen
    ds = data_gen.build("refs-1m-1table", refs=100_000, seed=1)
    ds.path, ds.gitdir, ds.manifest["content_hash"]

Contract: build(preset, **params) returns a Dataset whose `gitdir` is a bare
repository that git opens (show-ref, fsck) and whose directory holds
manifest.json. The same preset and parameters give the same repository
bytes; asking again for a matching dataset reuses it (Dataset.cached); a
changed parameter rebuilds it, but only in a directory that is one of our
datasets (anything else raises DataGenError and is left untouched). A new
dataset is built beside its destination and moved into place when complete.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .manifest import (
    GENERATOR,
    GENERATOR_VERSION,
    REPO_DIR,
    DataGenError,
    Dataset,
    cache_state,
    content_hash,
    fingerprint,
    read_manifest,
    replace_dir,
    write_manifest,
)
from .presets import PARAMS, PRESETS, get_preset, list_presets

__all__ = ["build", "Dataset", "DataGenError", "PRESETS", "PARAMS", "list_presets",
           "default_dir", "DEFAULT_ROOT"]

DEFAULT_ROOT = Path("datasets")

_TAGS = {"refs": "r", "tables": "t", "seed": "s", "commits": "c", "files": "f",
         "depth": "d", "window": "w"}


def default_dir(preset: str, params: dict[str, Any], root: Path | str | None = None) -> Path:
    """<root>/<preset>-<params>, e.g. datasets/refs-1m-1table-r1000000-s0-sha1-log-spread."""
    parts = [preset]
    for k, v in params.items():
        if k in _TAGS:
            parts.append(f"{_TAGS[k]}{v}")
        elif k == "via_git":
            parts.append("git" if v else "core")
        elif k == "reflog":
            parts.append("log" if v else "nolog")
        else:
            parts.append(str(v))
    return Path(root if root is not None else DEFAULT_ROOT) / "-".join(parts)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def set_postfix_str(self, s: str) -> None:
        pass


def _progress_factory(enabled: bool) -> Any:
    if not enabled:
        return lambda **kw: _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return lambda **kw: _NoBar()

    def make(**kw: Any) -> Any:
        # delay: only shows up for steps that take more than a second
        return tqdm(file=sys.stderr, delay=1.0, unit_scale=True, dynamic_ncols=True,
                    leave=False, **kw)
    return make


def build(preset: str, *, out: Path | str | None = None, root: Path | str | None = None,
          force: bool = False, progress: bool = False, git: str | None = None,
          verify: str = "fingerprint", **params: Any) -> Dataset:
    """Build (or reuse) a dataset. params: see `reftable-lab gen --list` / PARAMS.

    out: the dataset directory (default <root>/<preset>-<params>, root default
    ./datasets); force: rebuild even on a cache hit; progress: tqdm bars on
    stderr; git: path of the git to use (default: the provisioned one);
    verify: "fingerprint" (paths and sizes) or "hash" (full content hash) for
    deciding whether an existing dataset is intact.
    """
    from gitbin import GitRunner, find_git, hermetic_env

    from .builders import BUILDERS, Context

    p = get_preset(preset)
    resolved = p.resolve(params)
    tunable = {k: v for k, v in resolved.items() if k in p.defaults}
    dest = Path(out) if out is not None else default_dir(preset, tunable, root)
    identity = {"preset": preset, "params": resolved, "generator_version": GENERATOR_VERSION}
    state = cache_state(dest, identity, verify=verify)
    if state == "foreign":
        raise DataGenError(
            f"{dest} exists and is not a data_gen dataset (no manifest.json of ours): "
            f"refusing to overwrite it; choose another --out or remove it yourself")
    if state == "hit" and not force:
        m = read_manifest(dest) or {}
        m["_cache_hit"] = True
        return Dataset(dest, dest / REPO_DIR, m)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    started = time.perf_counter()
    try:
        runner = GitRunner(git or find_git(), hermetic_env())
        ctx = Context(tmp, resolved, runner, _progress_factory(progress), preset)
        facts = BUILDERS[p.builder](ctx)
        ctx.phase("rest of the build")
        repo = tmp / REPO_DIR
        chash = content_hash(repo)
        ctx.phase("content hash")
        manifest: dict[str, Any] = {
            "generator": GENERATOR,
            "generator_version": GENERATOR_VERSION,
            "preset": preset,
            "params": resolved,
            "writer": "git" if resolved.get("via_git") else "reftable_core",
            "git_version": runner.version(),
            "content_hash": chash,
            "fingerprint": fingerprint(repo),
            "facts": facts,
            "build_seconds": round(time.perf_counter() - started, 3),
            "phase_seconds": ctx.phases,
        }
        write_manifest(tmp, manifest)
        replace_dir(tmp, dest)
    except subprocess.CalledProcessError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        err = (e.stderr or b"").decode(errors="replace").strip()[-2000:]
        cmd = " ".join(str(a) for a in e.cmd[1:4])
        raise DataGenError(f"git {cmd}... failed (exit {e.returncode}) while building "
                           f"{preset}: {err}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest["_cache_hit"] = False
    return Dataset(dest, dest / REPO_DIR, manifest)

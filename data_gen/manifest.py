"""Dataset manifests, content hashes and the cache decision.

Contract: a dataset directory holds `manifest.json` (preset, parameters,
generator version, content hash, file fingerprints, facts such as probe refs)
beside the repository `repo.git/`. `content_hash(dir)` hashes every file under
the repository (path and bytes, in sorted path order). `cache_state(dir,
params)` says whether a directory is missing, empty, a matching dataset (a
cache hit), one of ours with other parameters (safe to regenerate) or
something else (never touched). Directories are replaced only after a new
dataset was built completely next to them.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GENERATOR = "reftable-lab data_gen"
GENERATOR_VERSION = 1
MANIFEST = "manifest.json"
REPO_DIR = "repo.git"


class DataGenError(ValueError):
    """Bad preset, parameters or output directory; the message says what to do."""


def _files(root: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for f in sorted(filenames):
            out.append(Path(dirpath) / f)
    out.sort(key=lambda p: p.relative_to(root).as_posix())
    return out


def fingerprint(repo: Path) -> list[list[Any]]:
    """[relative path, size] per file: a cheap check that nobody changed the repo."""
    return [[p.relative_to(repo).as_posix(), p.stat().st_size] for p in _files(repo)]


def content_hash(repo: Path) -> str:
    """sha256 over (relative path, size, bytes) of every file, in path order."""
    h = hashlib.sha256()
    for p in _files(repo):
        rel = p.relative_to(repo).as_posix().encode()
        h.update(b"%d:%s:%d\n" % (len(rel), rel, p.stat().st_size))
        with open(p, "rb") as f:
            while True:
                chunk = f.read(1 << 22)
                if not chunk:
                    break
                h.update(chunk)
    return "sha256:" + h.hexdigest()


@dataclass
class Dataset:
    """A built dataset: its directory, its git dir and its manifest."""
    path: Path
    gitdir: Path
    manifest: dict[str, Any]

    @property
    def cached(self) -> bool:
        """True when build() reused an existing dataset."""
        return bool(self.manifest.get("_cache_hit", False))


def read_manifest(path: Path) -> dict[str, Any] | None:
    mf = path / MANIFEST
    try:
        data = json.loads(mf.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("generator") != GENERATOR:
        return None
    return data


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    data = {k: v for k, v in manifest.items() if not k.startswith("_")}
    (path / MANIFEST).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def cache_state(path: Path, identity: dict[str, Any], verify: str = "fingerprint") -> str:
    """One of: "missing", "empty", "hit", "stale" (ours, other parameters or damaged), "foreign".

    identity: {"preset", "params", "generator_version"}; verify: "fingerprint"
    (paths and sizes, fast) or "hash" (full content hash).
    """
    if not path.exists():
        return "missing"
    if not path.is_dir():
        return "foreign"
    if not any(path.iterdir()):
        return "empty"
    m = read_manifest(path)
    if m is None:
        return "foreign"
    for k, v in identity.items():
        if m.get(k) != v:
            return "stale"
    repo = path / REPO_DIR
    if not repo.is_dir():
        return "stale"
    if verify == "hash":
        return "hit" if content_hash(repo) == m.get("content_hash") else "stale"
    return "hit" if fingerprint(repo) == m.get("fingerprint") else "stale"


def replace_dir(new: Path, dest: Path) -> None:
    """Move a freshly built dataset into place; an old dataset of ours goes first."""
    if dest.exists():
        trash = dest.with_name(dest.name + f".old-{os.getpid()}")
        os.rename(dest, trash)
        os.rename(new, dest)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.rename(new, dest)

"""The measures' LD_PRELOAD libraries, built from their C source on first use.

Contract: library(source, cache) is the shared object of lab/measure/c/<name>.c,
compiled with gcc once per source version into the directory cache
(<name>-<sha256 of the source, 16 hex>.so; never committed as a binary) and
reused after; available(source, cache) says whether it exists or can be built. The
libraries: alloccount.c (lab.measure.allocations: heap allocation counts) and
detrand.c (lab.measure.instructions: the counted processes' deterministic
randomness).
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from . import BenchError, run_command

SOURCES = Path(__file__).parent / "c"
CACHE_ROOT = Path.home() / ".cache" / "reftable-lab"
GCC = "gcc"


def _target(source: Path, cache: Path) -> Path:
    key = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    return cache / f"{source.stem}-{key}.so"


def available(source: Path, cache: Path) -> bool:
    """The library of source is built, or gcc is there to build it."""
    return shutil.which(GCC) is not None or _target(source, cache).exists()


def library(source: Path, cache: Path) -> Path:
    """The library of source's current version, built with gcc on first use (into a
    temporary name, then renamed: parallel builders do not collide)."""
    out = _target(source, cache)
    if out.exists():
        return out
    if shutil.which(GCC) is None:
        raise BenchError(f"building {source.name} (an LD_PRELOAD library of the measures) "
                         f"needs gcc")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.stem}.{os.getpid()}.so"
    run_command([GCC, "-O2", "-shared", "-fPIC", "-Wall", "-o", str(tmp), str(source)])
    os.replace(tmp, out)
    return out

#!/usr/bin/env bash
# Build reftable_core with Cython (pure Python mode), out of tree, and print the folder to
# put first on PYTHONPATH (a copy of the package with the extension modules beside the .py
# files, which the import system prefers; the source tree is never touched).
#
#   bash scripts/build-cython-core.sh [CORE_DIR]    (default: this checkout's core/)
#
# The same .py sources as the interpreted model and as mypyc's build
# (scripts/build-compiled-core.sh); the C types live in .pxd files beside the hot modules
# (Cython reads module.pxd beside module.py: "augmenting .pxd"), which the interpreter and
# mypyc never read. Type annotations are not read as C types (annotation_typing=False):
# the .pxd files are the one place the C types are declared, so an annotation never
# changes what a function accepts (Cython 3 would make `x: float` a C double and check
# `x: list` exactly). language_level=3.
#
# The folder is <cache>/cython-core/<key>/ (cache: $REFTABLE_LAB_CACHE, else
# ~/.cache/reftable-lab), key = a hash of the package's .py and .pxd files, this script,
# the Python and Cython versions, so an edit of the source makes a new build and an
# unchanged one is reused (it holds lab-build.json once complete). Builds are serialized
# by a lock (parallel test workers wait for the first one). PYTHON names the interpreter
# with Cython installed (default: python3; the dev extra installs it). C: -O2 with a raised
# inlining budget (CFLAGS_LAB, below), at most CYTHON_JOBS (default 2) compiler jobs. Log:
# <folder>/lab-build.log.
set -euo pipefail
export LC_ALL=C                 # one sort order for the key

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT="$ROOT/scripts/$(basename "${BASH_SOURCE[0]}")"
REWRITES="$ROOT/scripts/cython_rewrites.py"
CORE_DIR="$(cd "${1:-$ROOT/core}" && pwd)"
PYTHON="${PYTHON:-python3}"
case "$PYTHON" in                # a relative path (make's .venv/bin/python) made absolute:
  */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;;   # we cd below
esac
JOBS="${CYTHON_JOBS:-2}"
CACHE_ROOT="${REFTABLE_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reftable-lab}"
BUILD_INFO=lab-build.json
DIRECTIVES="language_level=3,annotation_typing=False"
CFLAGS_LAB="-O2 --param large-function-growth=1000 --param inline-unit-growth=1000 --param large-function-insns=100000"

# A .pxd types the locals of cdef/cpdef functions only; a generator can be neither, so the
# record and merge loops (loops.py's generators) declare theirs with @cython.locals in the
# .py (see the shim below).
# Modules left interpreted, each with the reason (none so far: every module compiles).
INTERPRETED=(
)

cd "$CORE_DIR"
[ -f reftable_core/__init__.py ] || { echo "build-cython-core: no reftable_core/ in $CORE_DIR" >&2; exit 2; }
cython_version="$("$PYTHON" -c 'import Cython; print(Cython.__version__)')" || {
  echo "build-cython-core: $PYTHON has no Cython (pip install Cython: the dev extra)" >&2; exit 2; }
# what the output depends on: the sources (.py and .pxd), this script (its list of
# modules left out, its directives and C flags), Python and Cython
key="$( { find reftable_core \( -name '*.py' -o -name '*.pxd' \) -print0 | sort -z \
            | xargs -0 sha256sum
          sha256sum < "$SCRIPT"; sha256sum < "$REWRITES"
          "$PYTHON" -c 'import sys; print(sys.version)'; echo "cython $cython_version"; } \
        | sha256sum | cut -c1-16)"
OUT="$CACHE_ROOT/cython-core/$key"
mkdir -p "$CACHE_ROOT/cython-core"
exec 9>"$CACHE_ROOT/cython-core/.lock"
flock 9
if [ -f "$OUT/$BUILD_INFO" ]; then echo "$OUT"; exit 0; fi

TMP="$OUT.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
find reftable_core \( -name '*.py' -o -name '*.pxd' \) -print0 | tar --null -cf - -T - \
  | tar -C "$TMP" -xf -
# The lines Cython compiles differently from the sources, each rewritten in place (line
# numbers stay the committed ones; the .py left beside each extension is the source as
# committed: what inspect and line profilers read):
# - the generated loops declare their locals' C types with @cython.locals, spelled through
#   reftable_core.cython_shim (a no-op) for the interpreter and mypyc; for Cython `cython`
#   must be its own;
# - the rewrites of scripts/cython_rewrites.py (record.py's dataclasses as Cython's, the
#   loops' byte moves as cbytes.pxd's C), each checked to match as often as it lists.
shim='^from \.\.cython_shim import cython\b.*$'
mapfile -t shimmed < <(cd "$TMP" && grep -rlE "$shim" --include='*.py' reftable_core | sort)
[ "${#shimmed[@]}" -gt 0 ] || { echo "build-cython-core: no module imports cython_shim" >&2; exit 1; }
for f in "${shimmed[@]}"; do
  cp "$TMP/$f" "$TMP/$f.committed"
  sed -i -E "s/$shim/import cython/" "$TMP/$f"
done
"$PYTHON" "$REWRITES" "$TMP" > /dev/null || { echo "build-cython-core: a rewrite failed" >&2; exit 1; }
skip=()
for entry in ${INTERPRETED[@]+"${INTERPRETED[@]}"}; do skip+=("${entry%%|*}"); done
# __init__.py files are compiled too (Cython compiles a package's __init__)
mapfile -t modules < <(cd "$TMP" && find reftable_core -name '*.py' | sort \
                       | grep -vxF -f <(printf '%s\n' ${skip[@]+"${skip[@]}"} ""))
echo "build-cython-core: cython ${#modules[@]} modules of $CORE_DIR into $OUT" >&2
start=$(date +%s)
# -O2 after Python's own -O3 (the last -O wins). GCC's inliner stops inlining into a
# function once the function has grown past a budget; the generated loops are large
# generators, so which of Cython's inline helpers (a type test, an int compare, a list
# read) a loop got inlined depended on the loop's size, and the two values of a flag (two
# functions) differed by helpers called out of line, 10 to 20 instructions a record, more
# than some flags change (README: single_subiter_bypass over 3 tables). With the budget
# raised, every loop inlines the same helpers and two variants differ by their own lines.
if ! (cd "$TMP" && CFLAGS="$CFLAGS_LAB" "$PYTHON" -m Cython.Build.Cythonize -i -q -j "$JOBS" \
        -X "$DIRECTIVES" "${modules[@]}") > "$TMP/$BUILD_INFO.log" 2>&1; then
  mkdir -p "$CACHE_ROOT/cython-core/failed"
  cp "$TMP/$BUILD_INFO.log" "$CACHE_ROOT/cython-core/failed/$key.log"
  echo "build-cython-core: cython failed; its log: $CACHE_ROOT/cython-core/failed/$key.log" >&2
  exit 1
fi
seconds=$(( $(date +%s) - start ))
while IFS= read -r -d '' f; do mv "$f" "${f%.committed}"; done \
  < <(find "$TMP" -name '*.py.committed' -print0)
mv "$TMP/$BUILD_INFO.log" "$TMP/lab-build.log"
rm -rf "$TMP/build"
find "$TMP" -name '*.c' -delete
"$PYTHON" - "$TMP" "$CORE_DIR" "$seconds" "$cython_version" "$DIRECTIVES" "$CFLAGS_LAB" \
    ${INTERPRETED[@]+"${INTERPRETED[@]}"} <<'PY'
import json, sys
from pathlib import Path
tmp, src, seconds, cython, directives, cflags, *interpreted = sys.argv[1:]
root = Path(tmp)
so = sorted(str(p.relative_to(root)) for p in root.rglob("*.so"))
info = {"src": src, "cython": cython, "directives": directives, "cflags": cflags,
        "seconds": int(seconds), "python": sys.version.split()[0], "extensions": so,
        "pxd": sorted(str(p.relative_to(root)) for p in root.rglob("*.pxd")),
        "interpreted": dict(e.split("|", 1) for e in interpreted)}
(root / "lab-build.json").write_text(json.dumps(info, indent=1))
PY
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
echo "build-cython-core: done in ${seconds}s" >&2
echo "$OUT"
